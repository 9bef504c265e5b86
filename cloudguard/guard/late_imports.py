"""Nothing is imported once the command started: every module after it was loaded before.

After the command exits, `cloudguard run` judges and reports with the
operator's authority, outside every namespace. A module it imported only
then would be read from disk then: from cloudguard's own installation, a
virtualenv or an interpreter the same user can write, so a `.pyc` the
command planted there would run as the judge (and, planted once, in every
later run). So `cloudguard run` imports, before the command starts, every
module the verdict, the messages and the requested `--report`s use
(`load_what_comes_after`), and refuses any import while the command runs
and after (`refused`): a module missed by that list fails loudly (an
ImportError, the run is never green), it is never loaded.

tests/guard/test_run.py holds it: a run that reaches and writes every
report imports nothing after the command started.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence


def load_what_comes_after(reports: Sequence[tuple[str, str]]) -> None:
    """Import every module the checks, the messages and `reports` may use after the command:
    the formats asked for, and what the keeper and the messages import only when needed."""
    import _signal  # noqa: F401  reach: a refuser in this process that cannot deliver
    import _socket  # noqa: F401  reach: a record passed on to an outer run's keeper
    import encodings.idna  # noqa: F401  socket: a host name encoded (--forward's relays)
    import fcntl  # noqa: F401  reach: a record appended
    import re  # noqa: F401  escape: a record's text defanged
    import unicodedata  # noqa: F401  escape: a record's text that needs escaping
    import urllib.parse  # noqa: F401  sarif: a location quoted

    from cloudguard.guard import hints, inprocess, report

    del hints, inprocess  # the advice for each channel (an in-process guard's its own)
    for name, _ in reports:
        report.load(name)


class _Refuser:
    """A finder first on `sys.meta_path`: any module not loaded yet is refused."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        raise ImportError(
            f"cloudguard imports nothing after the command started, and {name} was not "
            "loaded before (cloudguard.guard.late_imports): failing closed",
            name=name,
        )


@contextlib.contextmanager
def refused() -> Iterator[None]:
    """While the command runs and until the verdict is given: no module is loaded."""
    finder = _Refuser()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
