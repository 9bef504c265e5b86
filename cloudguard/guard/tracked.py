"""Tracked files: a run leaves the checkout as it found it, outside its declared outputs.

Asked of git itself, before the run and after: `git status --porcelain -z
--untracked-files=all` lists every file that differs from the index or HEAD
and every untracked file git does not ignore. The run is blamed only for
what changed between the two lists (a checkout that was dirty before is not
the run's doing): a path listed only after (modified, deleted, added), a
path listed only before (put back as HEAD has it), and a path listed both
times whose content the run changed further (each file listed before is
fingerprinted, as `roots` does). Paths under a declared output, and the
run's own reach log, are left out; `.gitignore`d paths git leaves out itself.

The checkout's own metadata that makes later commands run code or hide
files (`.git/config`, `.git/hooks`, `.git/info`) is not in the working tree:
it is an ambient root of the run instead (`hard.masks.repository_hooks`, the
list the hard seal keeps read-only).

git runs with the operator's environment as it was before the run (never
what the command set: a `GIT_DIR` of the suite's would point it elsewhere)
and `GIT_OPTIONAL_LOCKS=0`, so asking never rewrites the index under a suite
that is using git. Stdlib only.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cloudguard import project_file
from cloudguard.guard import roots
from cloudguard.guard.roots import Change, Fingerprint

GIT_TIMEOUT = 300.0
_ENVIRONMENT = ("PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL")

State = dict[str, tuple[str, Fingerprint | None]]  # relative path -> (git's XY, fingerprint)


class TrackedError(Exception):
    """git could not say what the checkout holds; the message names why."""


@dataclass(frozen=True)
class Checkout:
    root: str  # the working tree's top directory
    environ: Mapping[str, str]  # what git runs with: the operator's, from before the run

    def git(self, *args: str) -> bytes:
        try:
            done = subprocess.run(
                ["git", "-C", self.root, *args],
                env=dict(self.environ),
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise TrackedError(f"git could not be run ({error})") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise TrackedError(f"git {args[0]} failed: {said[-1] if said else done.returncode}")
        return done.stdout

    def state(self) -> State:
        """Every path git lists as differing or untracked, with its fingerprint now."""
        listed = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
        found: State = {}
        for entry in listed.split(b"\0"):
            if len(entry) > 3:
                path = os.fsdecode(entry[3:])
                found[path] = (entry[:2].decode("ascii", "replace"), self.fingerprint(path))
        return found

    def fingerprint(self, relative: str) -> Fingerprint | None:
        return roots.fingerprint_path(os.path.join(self.root, relative))


def find_checkout(where: Path, environ: Mapping[str, str]) -> Checkout | None:
    """The git checkout `where` is in, or None outside one (no `.git` above it: no git run)."""
    if project_file.repository_root(Path(os.path.abspath(where))) is None:
        return None
    env = {name: environ[name] for name in _ENVIRONMENT if name in environ}
    env.update(GIT_OPTIONAL_LOCKS="0", LANG="C")
    said = Checkout(str(where), env).git("rev-parse", "--show-toplevel")
    lines = os.fsdecode(said).splitlines()
    if len(lines) != 1:
        raise TrackedError(f"git rev-parse said {lines!r}, not the checkout's top directory")
    return Checkout(lines[0], env)


def changes(
    checkout: Checkout,
    before: State,
    after: State,
    *,
    outputs: Sequence[str] = (),
    skip: Sequence[str] = (),
) -> list[Change]:
    """What the run changed in the working tree: each path named, outside `outputs`
    (checkout-relative entries, or absolute paths) and `skip` (absolute paths)."""
    found = []
    for path in sorted(before.keys() | after.keys()):
        was, now = before.get(path), after.get(path)
        if was == now:
            continue  # as it was before the run (clean, or as dirty): not the run's doing
        if _left_out(os.path.join(checkout.root, path), path, outputs, skip):
            continue
        current = now[1] if now is not None else checkout.fingerprint(path)
        if current is None:
            change = "deleted"
        elif was is None and now is not None and now[0] == "??":
            change = "added"
        else:
            change = "modified"
        found.append(Change(path, change, checkout.root))
    return found


def _left_out(absolute: str, relative: str, outputs: Sequence[str], skip: Sequence[str]) -> bool:
    if any(roots.matches(relative, o) for o in outputs if not os.path.isabs(o)):
        return True
    return any(roots.under(absolute, o) for o in (*skip, *outputs) if os.path.isabs(o))
