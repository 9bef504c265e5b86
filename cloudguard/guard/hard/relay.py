"""Inside the hard seal: every record goes to the host's keeper over a pipe only the two hold.

The supervisor serves the run's keeper names in the seal's network namespace
(`cloudguard.guard.channel`), where the refusers inside can reach them, and
the sink's own records join them here. Each record is written as one line to
the records pipe the host passed in; the host's keeper parses and holds it
(`launch.RecordsFromInside`). The command cannot reach the pipe: it is never
inherited past the supervisor, and the command's pid namespace cannot name
the supervisor to signal, trace or starve it.

The host answers each line on a second pipe (one byte per line) once its
keeper holds the record and wrote it to the log, and only then is the
refuser answered (or the packet refused): a test that looks at the log right
after its reach finds it there. The sink relays a whole batch of packets'
records in one write and waits once for all their answers: a round trip per
record would bound the sink's throughput, and no packet of the batch is
answered before every record of it is held.
At the end the supervisor tells the host how many records it relayed; a host
that received another number fails the run closed (97). Stdlib only. The
refusers' lines are passed on as they came, after a check that each is one
line of one JSON object; the supervisor's own records are written by json's
C encoder (loaded already in the host this process is forked from), the
bytes `reach.record_line` would write, in 60% of its time (`_line`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence

from cloudguard.guard import reach

_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)  # ASCII, as record_line


def _line(record: Mapping[str, object]) -> bytes:
    """`reach.record_line(record)`: the same bytes for a record of JSON's own types, by the C
    encoder; a record holding anything else, as record_line writes it."""
    try:
        return (_ENCODER.encode(record) + "\n").encode("ascii")
    except (TypeError, ValueError):
        return reach.record_line(record)


class Relay:
    def __init__(self, fd: int, answers: int) -> None:
        self.fd = fd
        self.answers = answers  # the host's answer to each line: one byte
        self.count = 0  # reach records relayed
        self.lost: str | None = None  # why a record could not be relayed, if one could not
        self._lock = threading.Lock()

    def record(self, record: Mapping[str, object]) -> None:
        """A record the supervisor made itself (the sink's, the gate's)."""
        self.record_many([record])

    def record_many(self, records: Sequence[Mapping[str, object]]) -> None:
        """Records relayed together: one write, one wait for all their answers."""
        if records:
            self._write(b"".join(map(_line, records)), counted=len(records))

    def receive(self, message: bytes) -> bool:
        """A refuser's delivery from inside: one line of one JSON object, passed on whole."""
        if not (message.startswith(b"{") and message.endswith(b"}\n")) or b"\n" in message[:-1]:
            self.tamper("a malformed message arrived on the record keeper's channel")
            return False
        return self._write(message, counted=1)

    def tamper(self, what: str) -> None:
        self._write(reach.record_line({"kind": "tampering", "what": what}), counted=0)

    def _write(self, lines: bytes, *, counted: int) -> bool:
        """Pass `lines` on and wait for one answer per line; `counted` of them are reaches."""
        with self._lock:
            try:
                view = memoryview(lines)
                while view:
                    view = view[os.write(self.fd, view) :]
                expected = lines.count(b"\n")
                while expected:
                    answers = os.read(self.answers, expected)
                    if not answers or answers.strip(b"k"):
                        raise OSError("the host stopped answering")
                    expected -= len(answers)
            except OSError as error:
                self.lost = f"the records pipe to the host broke ({error.strerror or error})"
                return False
            self.count += counted
        return True
