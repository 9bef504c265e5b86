"""A real headless Chromium, driven over the DevTools protocol on a pipe (stdlib only).

Chromium comes from the distribution's packages (.ci/run installs it). It runs
inside `unshare -rn`: a network namespace of its own with no interface up, so
a page that tried to load anything from the network could not. The DevTools
protocol travels over file descriptors 3 and 4 (--remote-debugging-pipe), not
a port.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)
# A bound on waiting for the browser, so a hung browser fails the test instead of hanging it.
PATIENCE_SECONDS = 60


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One browser, one page. Console errors and exceptions are collected as they arrive."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4: a shell moves
        # our pipe ends there (bash: dash takes no fd above 9), then becomes unshare,
        # which becomes Chromium.
        redirect = f'exec "$@" 3<&{to_browser_r} 4>&{from_browser_w}'
        command = ["unshare", "-rn", binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"]
        self.log = profile / "chromium.log"  # its stderr, quoted when it stops answering
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                ["bash", "-c", redirect, "bash", *command],
                pass_fds=(to_browser_r, from_browser_w),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.console_errors: list[str] = []
        self._events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.page(f"{domain}.enable")

    # -- protocol ------------------------------------------------------------------

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise ConnectionError(f"Chromium is gone: {self._log_tail()}") from None
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self._note(reply)

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self._session, **params)

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + PATIENCE_SECONDS
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise ConnectionError(f"Chromium closed the DevTools pipe: {self._log_tail()}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(raw))

    def _log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def _note(self, event: dict[str, Any]) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.console_errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in {"error", "assert"}:
            self.console_errors.append(json.dumps(params.get("args", []))[:500])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.console_errors.append(params["entry"].get("text", "")[:500])
        self._events.append(event)

    def wait_for(self, method: str) -> None:
        if any(e.get("method") == method for e in self._events):
            return
        while True:
            event = self._receive()
            self._note(event)
            if event.get("method") == method:
                return

    # -- what the tests use --------------------------------------------------------

    def open(self, url: str) -> None:
        self._events.clear()  # wait for this page's load, not an earlier one's
        self.page("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def resize(self, width: int, height: int = 1000) -> None:
        self.page("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)  # fmt: skip

    def screenshot(self, path: Path, width: int = 1400) -> None:
        self.resize(width)
        data = self.page("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.parent.mkdir(parents=True, exist_ok=True)  # no test relies on another's folder
        path.write_bytes(base64.b64decode(data["data"]))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, ConnectionError, TimeoutError, OSError):
            self.call("Browser.close")
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
