"""One guarded session: the steps `cloudguard run` and the pytest plugin both take.

    log = alarm.arm_log(path, by=...)           # 97 when the log is not ours to use
    session = GuardSession.start(registry, log) # the seal: refusers that record to this log
    env = session.sealed_environment(environ)   # what the command or the suite runs under
    print(session.seal_line())                  # names only, never values
    ... the command, or the test session ...
    session.record_writes()                     # what it must have left as it was: findings
    session.check(err) / session.records()      # 0 / 98 / 97, or the records to judge
    session.close(keep_log=red)                 # the seal removed, a clean temporary log too

A session that starts keeps its records itself (`cloudguard.guard.keeper`): every
refuser under its seal delivers to its keeper, which writes the log and gives
the verdict from memory; the log is the report. A process that already runs
under a verified seal (an xdist worker, a pytest session under `cloudguard run`)
joins it instead (`GuardSession.join`): it makes nothing and removes nothing,
delivers to the keepers its environment names, and reads the log (the keeper's
report) from where it joined for its own tests.

A session that starts also keeps a witness (`cloudguard.guard.witness`): the
ambient roots and the checkout's tracked files, looked at before anything
runs; `record_writes` looks again and hands each change to the keeper as a
record, so a write reaches the verdict as a reach does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from cloudguard.documents import reach_log
from cloudguard.guard import alarm, reach
from cloudguard.guard.keeper import Keeper
from cloudguard.guard.policy import Policy
from cloudguard.guard.seal import Seal, create_seal, seal_line, sealed_environment
from cloudguard.guard.seal import policy as seal_policy
from cloudguard.guard.seal_registry import Registry
from cloudguard.guard.witness import SPEC, Witness

Record = Mapping[str, object]


class GuardSession:
    """A reach log armed (or joined) for one run or test session, and the seal it runs under."""

    def __init__(
        self,
        registry: Registry,
        log: alarm.ArmedLog,
        seal: Seal,
        *,
        made: bool,
        keeper: Keeper | None = None,
        keepers: Sequence[str] = (),
        witness: Witness | None = None,
    ) -> None:
        self.registry = registry
        self.log = log
        self.seal = seal
        self.made = made  # this session made the seal: it removes it when it closes
        self.keeper = keeper  # this session's own record keeper (None: it joined another's)
        self.keepers = tuple(keepers)  # every keeper its refusers deliver to, its own first
        self.dropped: list[str] = []  # the names its sealed environment dropped
        self.witness = witness  # what it must leave as it found it (None: joined)

    @classmethod
    def start(
        cls,
        registry: Registry,
        log: alarm.ArmedLog,
        *,
        environ: Mapping[str, str] = os.environ,
        signalled: bool = False,
        checkout: Path | None = None,
    ) -> GuardSession:
        """Start a keeper for `log` and make a seal whose refusers deliver to it, and to the
        keepers of whatever run this one is inside (`environ`): written into each refuser,
        so a child that scrubs its environment still records. `signalled`: a refuser that
        cannot deliver may signal this process (see `Keeper`). The witness looks at the
        ambient roots (expanded in `environ`) and at the checkout `checkout` is in."""
        keeper = seal = None
        try:
            keeper = Keeper(log.path, log.start, signalled=signalled)
            keepers = reach.keepers([keeper.address], environ)
            if signalled:  # a run inside runs: theirs by its ancestors, whatever its environment
                keepers = list(dict.fromkeys((*keepers, *keeper.enclosing())))
            seal = create_seal(registry, log=log.path, keepers=keepers)
            witness = Witness.before(registry, environ, checkout, skip=[log.path, str(seal.root)])
            (seal.root / SPEC).write_text(witness.spec(), encoding="utf-8")
        except BaseException:
            if seal is not None:
                seal.remove()
            if keeper is not None:
                keeper.close()
            log.close()
            raise
        return cls(registry, log, seal, made=True, keeper=keeper, keepers=keepers, witness=witness)

    @classmethod
    def join(cls, registry: Registry, seal: Seal, environ: Mapping[str, str]) -> GuardSession:
        """The seal and log this process runs under (`seal.inherited_seal` verified them).

        Judged from here on: what the log held before belongs to whoever armed it.
        Raises ReachLogError when the log cannot be read or watched.
        """
        path = environ[reach.LOG_VARIABLE]
        start = reach_log.read(path).end
        log = alarm.ArmedLog(path, start, owned=False, watch=alarm.LogWatch(path))
        return cls(registry, log, seal, made=False, keepers=reach.keepers((), environ))

    def sealed_environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """`environ` sealed: registry matches dropped (remembered for the seal line), stores
        redirected, the log armed, the provider bound, the guards first on PATH and PYTHONPATH."""
        env, self.dropped = sealed_environment(
            environ, self.registry, self.seal, self.log.path, self.keepers
        )
        return env

    def seal_line(self, *, kept: Iterable[str] = ()) -> str:
        """The one line a seal prints: the names dropped (and `kept`: the suite's own)."""
        return seal_line(self.dropped, kept=kept)

    def notes(self) -> list[str]:
        """What the operator is told at the start: declarations that do not count, roots
        compared in part, a checkout git cannot list."""
        return list(self.witness.notes) if self.witness is not None else []

    def record_writes(self) -> None:
        """Look again at the ambient roots and the checkout; each change no record named yet
        goes to the keeper. Once, at the end (a joined session's run does it)."""
        if self.witness is None or self.keeper is None:
            return
        for record in self.witness.after(named=self.keeper.records):
            self.keeper.keep(record)
        self.witness = None

    def deliver(self, record: Record) -> str | None:
        """Hand a record this process made to the keeper (its own, or its run's); why not, if
        it could not be."""
        if self.keeper is not None:
            self.keeper.keep(record)
            return None
        status = reach.record_status(record, keepers=self.keepers, log=self.log.path)
        return status if status.startswith("NOT recorded") else None

    def policy(self) -> Policy:
        """The seal's rules, as the refusers and the in-process guards apply them."""
        return seal_policy(self.registry, self.seal)

    def records(self) -> tuple[Record, ...]:
        """The reaches recorded since the session began: its keeper's, or (joined) the log's
        from where it joined; ReachLogError when that log was replaced, shrunk or unreadable."""
        if self.keeper is not None:
            return tuple(self.keeper.records)
        return self.log.records()

    def cursor(self) -> int:
        """Where the records stand now: what `since` takes to return only later ones."""
        if self.keeper is not None:
            return len(self.keeper.records)
        return _size(self.log.path)

    def since(self, cursor: int) -> tuple[tuple[Record, ...], int]:
        """The records after `cursor`, and the cursor after them. From the keeper's memory; a
        joined session reads the log (one stat when nothing was appended)."""
        if self.keeper is not None:
            self.keeper.report_intact()  # an altered report is the keeper's tampering entry
            records = tuple(self.keeper.records[cursor:])
            return records, cursor + len(records)
        if self.log.watch.verify() == cursor:
            return (), cursor
        read = reach_log.read(self.log.path, start=cursor)
        return read.reaches, read.end

    def tampering(self) -> list[str]:
        """What this session's keeper saw done to its channel or its log ([] when joined)."""
        return list(self.keeper.tampering) if self.keeper is not None else []

    def check(self, err: TextIO) -> int:
        """0 when clean; 98 naming every reach and write; 97 when the log cannot be read or the
        keeper saw tampering. The writes are looked for, then the keeper stops taking records:
        call it once, at the end."""
        if self.keeper is None:
            return alarm.check(self.log.path, self.log.start, err, watch=self.log.watch)
        self.record_writes()
        self.keeper.close()
        return alarm.judge(
            tuple(self.keeper.records), self.log.path, err, tampering=self.keeper.tampering
        )

    def close(self, *, keep_log: bool) -> None:
        """Stop the keeper, remove the seal this session made and stop watching; a temporary
        log this session armed is removed too unless `keep_log` (a red session keeps its
        evidence)."""
        if self.keeper is not None:
            self.keeper.close()
        if self.made:
            self.seal.remove()
        self.log.close()
        if self.log.owned and not keep_log:
            Path(self.log.path).unlink(missing_ok=True)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1  # deleted: differs from any offset, so the next read names the problem
