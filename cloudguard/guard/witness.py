"""The run's witness: what it must leave as it found it, looked at before and after.

Two kinds of place, each with its own finding (a `reach` record with its own
`via`, so a write reaches the verdict the way a reach does: through the
record keeper, exit 98):

- `ambient-write`: a path under an ambient root (the registry's
  `[ambient.roots]`, every masked credential home, the checkout's git
  metadata) created, deleted or modified (`roots.Snapshot`);
- `tracked-write`: a file of the checkout's working tree modified, deleted or
  added, outside what git ignored before the run and the declared outputs, or
  the checkout's `.git` metadata changed (`tracked`: git is asked before the
  run only).

Never a finding: cloudguard's own history store (in the trust store's root),
the files this process's stdout and stderr write to (`> test.log`), and,
under `--hard`, a change inside a root the seal keeps read-only (the command
cannot have made it; a write it aims there is recorded at the attempt).

`Witness.before` looks when the run or session starts (before the command,
before any conftest is imported); `after` looks again and returns a record
for each change no earlier record named (the pytest plugin names a write in
the test that made it, `cloudguard.guard.watch`). The roots are expanded in
the operator's environment as the run found it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cloudguard.guard import reach, roots, tracked
from cloudguard.guard.hard import masks
from cloudguard.guard.roots import Change, Root, Snapshot
from cloudguard.guard.seal_registry import Registry, is_ambient

AMBIENT_WRITE = reach.AMBIENT_WRITE
TRACKED_WRITE = reach.TRACKED_WRITE
MAX_LISTED = 100  # changes listed one by one under a root (or the checkout); then one "more"
SPEC = "witness.json"  # in the seal directory: the roots a joined session watches per test
# cloudguard's own history store (`cloudguard.history.location.default_path`) and SQLite's files
# beside it, inside the `$XDG_STATE_HOME/cloudguard` root: any cloudguard process (a scheduled
# audit) writes them at any time, and nothing reads them as configuration or trust. The trust
# store beside them (`trusted.json`) stays watched.
HISTORY_STORE = "$XDG_STATE_HOME/cloudguard/history.sqlite3"
SQLITE_COMPANIONS = ("", "-journal", "-wal", "-shm")

Record = Mapping[str, object]


def write_record(
    via: str, target: str, change: str, root: str, found: str, *, test: str = ""
) -> dict[str, object]:
    """A write finding, as a reach record: who wrote is not known when it is found after, so
    pid and ppid are null and argv empty; `test` names the test that was running, if known."""
    record = reach.reach_record(
        via=via,
        argv=(),
        target=target,
        environ={reach.TEST_VARIABLE: test},
        change=change,
        root=root,
        found=found,
    )
    record.update(pid=None, ppid=None, cwd="")
    return record


@dataclass
class Witness:
    roots: list[Root]
    outputs: list[str]  # ambient ones expanded (absolute), checkout-relative ones as declared
    skip: list[str]  # absolute paths the run itself writes (its log, its seal)
    snapshot: Snapshot
    checkout: tracked.Checkout | None = None
    tracked_before: tracked.State | None = None
    notes: list[str] = field(default_factory=list)  # for the operator, at the start
    own_output: frozenset[tuple[str, int, int]] = frozenset()  # our fd 1 and 2's files
    sealed: list[Root] = field(default_factory=list)  # read-only inside the hard seal

    @classmethod
    def before(
        cls,
        registry: Registry,
        environ: Mapping[str, str],
        where: Path | None,
        skip: Sequence[str] = (),
    ) -> Witness:
        notes = list(registry.ignored_outputs)
        checkout = None
        if where is not None:
            try:
                checkout = tracked.find_checkout(where, environ)
            except tracked.TrackedError as error:
                notes.append(f"tracked files are not checked: {error}")
        found, outputs = places(registry, environ, where)
        absolute_outputs = [o for o in outputs if os.path.isabs(o)]
        skip = [*skip, *history_store(environ)]
        snapshot = Snapshot.take(found, skip=[*skip, *absolute_outputs])
        notes += [
            f"ambient root {entry} holds over {roots.MAX_ENTRIES:,} entries: it is compared "
            f"only up to the {roots.MAX_ENTRIES:,}th, in sorted order"
            for entry in snapshot.partial
        ]
        witness = cls(found, outputs, skip, snapshot, checkout, notes=notes)
        witness.own_output = own_output()
        if checkout is not None:
            try:
                witness.tracked_before = checkout.state()
            except tracked.TrackedError as error:
                witness.notes.append(f"tracked files are not checked: {error}")
                witness.checkout = None
        return witness

    def read_only_inside(self) -> None:
        """The command runs in the hard seal, where `read_only` roots are read-only mounts and
        a write aimed at one is refused and recorded at the attempt: a change found there
        after the run was made by another process (a scheduled audit), never the command."""
        self.sealed = read_only(self.roots, self.outputs)[0]

    def after(self, named: Iterable[Record] = ()) -> list[dict[str, object]]:
        """A record for each change since `before` that no record in `named` covers."""
        already = [str(r.get("target")) for r in named if r.get("via") == AMBIENT_WRITE]
        ambient = [
            change
            for change in _explained(self.snapshot.changes(self.snapshot.again()))
            if not any(roots.under(change.path, t) or roots.under(t, change.path) for t in already)
            and not self._not_the_commands(change.path)
        ]
        records = _listed(AMBIENT_WRITE, ambient, "after the run")
        if self.checkout is not None and self.tracked_before is not None:
            now = self.checkout.look(self.tracked_before)  # no git after the run
            changed = tracked.changes(
                self.checkout, self.tracked_before, now, outputs=self.outputs, skip=self.skip
            )
            changed = [
                c for c in changed
                if not self._not_the_commands(os.path.join(self.checkout.root, c.path))
            ]  # fmt: skip
            records += _listed(TRACKED_WRITE, changed, "after the run")
        return records

    def _not_the_commands(self, path: str) -> bool:
        """A change the command cannot have made: to cloudguard's own stdout or stderr file
        (`cloudguard run -- make test > test.log`), or inside a root the hard seal kept
        read-only."""
        if any(roots.under(path, r.path) for r in self.sealed):
            return True
        if not self.own_output:
            return False
        try:
            status = os.lstat(path)
        except OSError:
            return False
        return (os.path.realpath(path), status.st_dev, status.st_ino) in self.own_output

    def watched(self) -> tuple[list[Root], list[str]]:
        """The roots to watch per test, and the paths under them that are not watched."""
        return self.roots, [*self.skip, *(o for o in self.outputs if os.path.isabs(o))]

    def spec(self) -> str:
        """What a joined session watches per test (the seal directory's `witness.json`)."""
        found, skip = self.watched()
        return json.dumps({"roots": [[r.entry, r.path] for r in found], "skip": skip})


def places(
    registry: Registry, environ: Mapping[str, str], where: Path | None
) -> tuple[list[Root], list[str]]:
    """The ambient roots of a run started in `environ` from `where` (the registry's, expanded,
    and the git metadata of the checkout `where` is in), and its declared outputs (ambient
    ones expanded, checkout-relative ones as declared)."""
    found = roots.resolve(registry.roots, environ)
    if where is not None:
        hooks = masks.repository_hooks(os.path.abspath(where))
        found += roots.resolve([path for path, _ in hooks], environ)
    outputs = [
        path
        for entry in registry.outputs
        for path in ([roots.expand(entry, environ)] if is_ambient(entry) else [entry])
        if path is not None
    ]
    return found, outputs


def history_store(environ: Mapping[str, str]) -> list[str]:
    """cloudguard's own history store files, where `environ` puts them (not watched)."""
    path = roots.expand(HISTORY_STORE, environ)
    return [] if path is None else [path + suffix for suffix in SQLITE_COMPANIONS]


def own_output() -> frozenset[tuple[str, int, int]]:
    """(path, device, inode) of the regular files this process's stdout and stderr write to,
    as they are before the run: cloudguard's own output, never a finding. The path too: a
    link the command makes to the same file elsewhere (`ln test.log conftest.py`) is not
    cloudguard's output, but a file of the command's."""
    found = set()
    for fd in (1, 2):
        try:
            status = os.fstat(fd)
            path = os.path.realpath(os.readlink(f"/proc/self/fd/{fd}"))
            named = os.lstat(path)
        except OSError:
            continue  # not a file, or not one we can name: nothing is left out
        same = (named.st_dev, named.st_ino) == (status.st_dev, status.st_ino)
        if stat.S_ISREG(status.st_mode) and same:
            found.add((path, status.st_dev, status.st_ino))
    return frozenset(found)


def read_only(found: Sequence[Root], outputs: Sequence[str]) -> tuple[list[Root], list[str]]:
    """What the hard seal keeps read-only: every root but those that are outputs whole; and
    the ambient outputs, writable inside them."""
    absolute = [o for o in outputs if os.path.isabs(o)]
    kept = [r for r in found if not any(roots.under(r.path, o) for o in absolute)]
    return kept, absolute


def read_spec(seal_root: str) -> tuple[list[Root], list[str]]:
    """The roots and skipped paths the session that made the seal watches ([] when none)."""
    try:
        with open(os.path.join(seal_root, SPEC), encoding="utf-8") as handle:
            spec = json.load(handle)
        found = [Root(str(entry), str(path)) for entry, path in spec["roots"]]
        return found, [str(path) for path in spec["skip"]]
    except (OSError, ValueError, KeyError, TypeError):
        return [], []


def _explained(changes: list[Change]) -> list[Change]:
    """A directory that was only modified is left out when a change below it is listed: its
    timestamps moved because of that change."""
    parents = {os.path.dirname(c.path) for c in changes}
    for parent in list(parents):
        while parent not in ("", "/"):
            parent = os.path.dirname(parent)
            parents.add(parent)
    return [c for c in changes if not (c.change == "modified" and c.path in parents)]


def _listed(via: str, changes: list[Change], found: str) -> list[dict[str, object]]:
    """One record per change, at most MAX_LISTED per root; then one naming how many more."""
    records: list[dict[str, object]] = []
    per_root: dict[str, int] = {}
    for change in changes:
        count = per_root[change.root] = per_root.get(change.root, 0) + 1
        if count <= MAX_LISTED:
            records.append(write_record(via, change.path, change.change, change.root, found))
    for root, count in per_root.items():
        if count > MAX_LISTED:
            more = f"{count - MAX_LISTED} more"
            records.append(write_record(via, root, more, root, found))
    return records
