"""A reader that stops reading is not an error: `cloudguard check 2>&1 | head -1`.

Python ignores SIGPIPE, so a write to a pipe whose reader has gone raises
BrokenPipeError wherever it happens: in the middle of a run (the seal line
written before the command starts), or in click, which then exits 1 ("orphans
found") and says nothing. Once its reader has gone, each of the command's
streams sends the rest to /dev/null, and the command finishes its work (the
run runs, the check judges) and exits with its own code.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


class ReaderMayLeave:
    """A text stream that, once its reader has gone (EPIPE), writes to /dev/null instead."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_nowhere()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_nowhere()

    def _to_nowhere(self) -> None:
        # The descriptor itself, so the interpreter's last flush at exit does not fail either.
        nowhere = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(nowhere, self._stream.fileno())
        finally:
            os.close(nowhere)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def reader_may_leave() -> None:
    """From now on, closed stdout and stderr are not errors (idempotent)."""
    if not isinstance(sys.stdout, ReaderMayLeave):
        sys.stdout = ReaderMayLeave(sys.stdout)
    if not isinstance(sys.stderr, ReaderMayLeave):
        sys.stderr = ReaderMayLeave(sys.stderr)
