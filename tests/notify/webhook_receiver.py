"""A webhook receiver on 127.0.0.1 for the notification tests: it records what it is sent.

It answers each request with the next of a scripted list of answers (status,
headers, body), then with the last one again; every request is kept (method,
path, headers, body) for the test to read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    def __init__(self, answers: list[Answer]) -> None:
        self.answers = list(answers) or [Answer()]
        self.received: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's names
                self._answer("POST")

            def do_GET(self) -> None:
                self._answer("GET")

            def _answer(self, method: str) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    receiver.received.append(
                        Received(method, self.path, dict(self.headers.items()), body)
                    )
                    answer = receiver.answers[
                        min(len(receiver.received), len(receiver.answers)) - 1
                    ]
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"


@contextmanager
def receiving(*answers: Answer) -> Iterator[Receiver]:
    receiver = Receiver(list(answers))
    thread = threading.Thread(target=receiver.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
        thread.join()
