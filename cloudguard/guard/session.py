"""One guarded session: the steps `cloudguard run` and the pytest plugin both take.

    log = alarm.arm_log(path, by=...)           # 97 when the log is not ours to use
    session = GuardSession.start(registry, log) # the seal: refusers that record to this log
    env = session.sealed_environment(environ)   # what the command or the suite runs under
    print(session.seal_line())                  # names only, never values
    ... the command, or the test session ...
    session.check(err) / session.records()      # 0 / 98 / 97, or the records to judge
    session.close(keep_log=red)                 # the seal removed, a clean temporary log too

A process that already runs under a verified seal (an xdist worker, a pytest
session under `cloudguard run`) joins it instead (`GuardSession.join`): it
makes nothing and removes nothing, and judges the log from where it joined.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

from cloudguard.documents import reach_log
from cloudguard.guard import alarm, reach
from cloudguard.guard import seal as sealing
from cloudguard.guard.refuse import Policy
from cloudguard.guard.registry import Registry

Record = Mapping[str, object]


class GuardSession:
    """A reach log armed (or joined) for one run or test session, and the seal it runs under."""

    def __init__(
        self, registry: Registry, log: alarm.ArmedLog, seal: sealing.Seal, *, made: bool
    ) -> None:
        self.registry = registry
        self.log = log
        self.seal = seal
        self.made = made  # this session made the seal: it removes it when it closes
        self.dropped: list[str] = []  # the names its sealed environment dropped

    @classmethod
    def start(cls, registry: Registry, log: alarm.ArmedLog) -> GuardSession:
        """Make a seal whose refusers record to `log` (written into each: a child that scrubs
        its environment still records there)."""
        try:
            seal = sealing.create_seal(registry, log=log.path)
        except BaseException:
            log.close()
            raise
        return cls(registry, log, seal, made=True)

    @classmethod
    def join(
        cls, registry: Registry, seal: sealing.Seal, environ: Mapping[str, str]
    ) -> GuardSession:
        """The seal and log this process runs under (`seal.inherited_seal` verified them).

        Judged from here on: what the log held before belongs to whoever armed it.
        Raises ReachLogError when the log cannot be read or watched.
        """
        path = environ[reach.LOG_VARIABLE]
        start = reach_log.read(path).end
        log = alarm.ArmedLog(path, start, owned=False, watch=alarm.LogWatch(path))
        return cls(registry, log, seal, made=False)

    def sealed_environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """`environ` sealed: registry matches dropped (remembered for the seal line), stores
        redirected, the log armed, the provider bound, the guards first on PATH and PYTHONPATH."""
        env, self.dropped = sealing.sealed_environment(
            environ, self.registry, self.seal, self.log.path
        )
        return env

    def seal_line(self, *, kept: Iterable[str] = ()) -> str:
        """The one line a seal prints: the names dropped (and `kept`: the suite's own)."""
        return sealing.seal_line(self.dropped, kept=kept)

    def policy(self) -> Policy:
        """The seal's rules, as the refusers and the in-process guards apply them."""
        return sealing.policy(self.registry, self.seal)

    def records(self, *, since: int | None = None) -> tuple[Record, ...]:
        """The reaches recorded since the session began (or `since`); ReachLogError when the
        log was replaced, shrunk or cannot be read."""
        return self.log.records(since=since)

    def check(self, err: TextIO) -> int:
        """0 when clean; 98 naming every reach; 97 when the log cannot be read."""
        return alarm.check(self.log.path, self.log.start, err, watch=self.log.watch)

    def close(self, *, keep_log: bool) -> None:
        """Remove the seal this session made and stop watching; a temporary log this session
        armed is removed too unless `keep_log` (a red session keeps its evidence)."""
        if self.made:
            self.seal.remove()
        self.log.close()
        if self.log.owned and not keep_log:
            Path(self.log.path).unlink(missing_ok=True)
