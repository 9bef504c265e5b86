"""Tracked files: a run leaves the checkout as it found it, outside its declared outputs.

git is asked once, BEFORE the run, and never after it: after the command,
git would read config, hooks, a monitor, filters or a `.git` indirection the
command may have planted, and run them with the operator's authority; and
git can be told (a commit, a skip-worktree bit, a new ignore rule hide a
change from `git status`). So, before the run, git lists (`ls-files`) the
tracked and the untracked-but-not-ignored paths, and the ignored ones; each
listed path is fingerprinted here (stat fields and a hash of its bytes), the
ignore rules in force are read (`ignore_rules`), and the `.git` metadata
that decides what git would report (the `.git` entry, HEAD, the branch HEAD
names, the index's entries: `git_index`) is read as bytes.

After the run the working tree is walked in Python (never `.git`, never a
path git said was ignored before, never a new path the rules from before
ignore) and compared with that snapshot by content: a path listed before
and gone is `deleted`, one changed is `modified` (a change of stat fields
alone, a `touch`, is none), a new path is `added` (a new `.gitignore` too:
it is a file, not a rule, after the run), and a change of the `.git`
metadata is a finding of its own, saying what it means. The run is blamed
only for what changed since the snapshot (a checkout dirty before is not
its doing). Paths under a declared output, and the run's own files, are left
out.

The git run before is hermetic: the program found on the operator's PATH
before the command started (absolute), `GIT_CONFIG_NOSYSTEM=1`,
`GIT_CONFIG_GLOBAL=/dev/null`, none of the operator's `GIT_*` variables,
`GIT_OPTIONAL_LOCKS=0` (asking never rewrites the index under a suite that
uses git), and `core.fsmonitor`, `core.hooksPath` and `core.untrackedCache`
fixed on the command line; `ls-files` runs no filter. The global excludes
file is the one thing read from the operator's git configuration (`git
config --get core.excludesFile`, which runs nothing), so that what they
ignore stays ignored. Submodules and nested repositories are compared as
entries only, not looked into. Stdlib only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cloudguard import project_file
from cloudguard.guard import git_index, ignore_rules, roots
from cloudguard.guard.roots import Change

GIT_TIMEOUT = 300.0
# Content hashed before the run: every listed file up to these bounds (past them the stat
# fields decide, and a change of them is a modification).
HASH_MAX_FILE = 64 * 1024 * 1024
HASH_BUDGET = 1024 * 1024 * 1024
# A ctime this close before the snapshot may share its clock tick with a write in the run.
RECENT_NS = roots.RECENT_NS
# git's whole environment: none of the operator's GIT_* variables, no system or global config.
HERMETIC = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_OPTIONAL_LOCKS": "0",
    "LANG": "C",
    "LC_ALL": "C",
    "PATH": "/usr/bin:/bin",
}
# The operator's, before the run: only to find git and read two settings of their own.
_OPERATOR = ("PATH", "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
_FIXED = (
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
    "-c", "core.untrackedCache=false",
)  # fmt: skip

# A file as the snapshot holds it: type, exec bit, size, inode, mtime, ctime; the hash of a
# regular file's bytes (None: not hashed) or a link's target.
Print = tuple[int, bool, int, int, int, int, str | None]

MEANINGS = {  # what a change of each piece of `.git` metadata is
    ".git": "the checkout's .git was replaced: git would read another repository",
    "HEAD": "HEAD changed during the run: a commit, checkout or reset",
    "ref": "the branch HEAD names moved during the run: a commit or reset",
    "index": "the index changed during the run: a file staged or committed, a skip-worktree "
    "or assume-unchanged bit",
}


class TrackedError(Exception):
    """git could not say what the checkout holds; the message names why."""


@dataclass
class State:
    """The checkout before the run."""

    files: dict[str, Print | None]  # listed by git: relative path -> print (None: not there)
    ignored: frozenset[str]  # relative paths git said were ignored (a directory: all below)
    rules: list[ignore_rules.Rule]  # the ignore rules in force, in increasing precedence
    metadata: dict[str, tuple[str, object]]  # shown path -> (meaning key, what it held)
    recent_ns: int
    opaque: frozenset[str] = field(default_factory=frozenset)  # submodules, nested repos
    holding: frozenset[str] = field(default_factory=frozenset)  # directories of listed paths


@dataclass(frozen=True)
class Checkout:
    root: str  # the working tree's top directory
    git_dir: str  # this working tree's git directory (HEAD, index)
    common_dir: str  # the repository's (refs, packed-refs, info)
    program: str  # git, as an absolute path found before the run
    environ: Mapping[str, str]  # what git runs with: fixed, none of the operator's
    excludes: str = "/dev/null"  # the global excludes file, resolved before the run
    oid_size: int = 20
    trusted: tuple[str, ...] = ()  # the operator's safe.directory entries (system, global)

    def git(self, *args: str) -> bytes:
        return _git(self.program, self.root, self.environ, [*_fixed(self.trusted), *args])

    def state(self) -> State:
        """What the checkout holds now: asked of git, then read here. Before the run only."""
        recent = time.time_ns() - RECENT_NS
        excludes = ("-c", f"core.excludesFile={self.excludes}")
        listed = _paths(self.git(*excludes, "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"))  # fmt: skip
        ignored = _paths(self.git(*excludes, "ls-files", "-z", "--others", "--ignored",
                                  "--exclude-standard", "--directory"))  # fmt: skip
        budget = [HASH_BUDGET]
        index = self._index()
        known, index_mtime = index[2], index[3]
        files: dict[str, Print | None] = {}
        opaque = set()
        for path in listed:
            name = path.rstrip("/")
            files[name] = _print(
                os.path.join(self.root, name), budget=budget,
                blob=known.get(os.fsencode(name)), index_mtime=index_mtime,
                oid_size=self.oid_size,
            )  # fmt: skip
            if path.endswith("/") or (files[name] or (0,))[0] == stat.S_IFDIR:
                opaque.add(name)
        holding = {p for name in files for p in _parents(name)}
        return State(
            files=files,
            ignored=frozenset(p.rstrip("/") for p in ignored),
            rules=self._rules(files),
            metadata=self.metadata(read=index[:2]),
            recent_ns=recent,
            opaque=frozenset(opaque),
            holding=frozenset(holding),
        )

    def _index(
        self,
    ) -> tuple[str | None, str | None, dict[bytes, tuple[bytes, tuple[int, ...]]], int]:
        """The index read once: its bytes' digest, its entries' (`git_index`), its clean
        entries, and its mtime in seconds (0: no index)."""
        path = os.path.join(self.git_dir, "index")
        try:
            mtime = int(os.lstat(path).st_mtime)
        except OSError:
            mtime = 0
        data = _read(path)
        if data is None:
            return None, None, {}, 0
        raw = hashlib.blake2b(data, digest_size=16).hexdigest()
        entries, known = git_index.read(data, self.oid_size)
        return raw, entries or f"bytes {raw}", known, mtime

    def _rules(self, files: Mapping[str, Print | None]) -> list[ignore_rules.Rule]:
        found = _read_rules(self.excludes, "")
        found += _read_rules(os.path.join(self.common_dir, "info", "exclude"), "")
        nested = sorted((p for p in files if os.path.basename(p) == ".gitignore"),
                        key=lambda p: (p.count("/"), p))  # fmt: skip
        for path in nested:
            found += _read_rules(os.path.join(self.root, path), os.path.dirname(path))
        return found

    def metadata(
        self,
        known: Mapping[str, tuple[str, object]] | None = None,
        *,
        read: tuple[str | None, str | None] | None = None,
    ) -> dict[str, tuple[str, object]]:
        """The `.git` metadata that decides what git reports, read as bytes (no git run);
        the index as (its bytes' digest, its entries'), its entries read again only when its
        bytes changed since `known`."""
        dot_git = os.path.join(self.root, ".git")
        head_path = os.path.join(self.git_dir, "HEAD")
        head = _read(head_path)
        found: dict[str, tuple[str, object]] = {
            self.shown(dot_git): (".git", _entry(dot_git)),
            self.shown(head_path): ("HEAD", head),
        }
        if head is not None and head.startswith(b"ref: "):
            name = os.fsdecode(head[5:].strip())
            loose = os.path.join(self.common_dir, name)
            packed = _packed(os.path.join(self.common_dir, "packed-refs"), name)
            found[self.shown(loose)] = ("ref", (_read(loose), packed))
        index_path = os.path.join(self.git_dir, "index")
        if read is not None:  # read already, with its clean entries (`state`)
            found[self.shown(index_path)] = ("index", read)
            return found
        data = _read(index_path)
        raw = None if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()
        was = (known or {}).get(self.shown(index_path), ("index", (None, None)))[1]
        if isinstance(was, tuple) and raw is not None and was[0] == raw:
            entries = was[1]  # the same bytes: the same entries
        else:
            entries = None if data is None else git_index.digest(data, self.oid_size)
            if entries is None and data is not None:
                entries = f"bytes {raw}"  # a form not read here: its bytes decide
        found[self.shown(index_path)] = ("index", (raw, entries))
        return found

    def shown(self, path: str) -> str:
        """`path` as a finding names it: checkout-relative when inside the checkout."""
        return os.path.relpath(path, self.root) if roots.under(path, self.root) else path

    def look(self, before: State) -> dict[str, Print | None]:
        """The working tree now, walked here (no git): every path the snapshot listed, and
        every new one outside what was ignored before."""
        found: dict[str, Print | None] = {}
        pending = [""]
        while pending:
            directory = pending.pop()
            try:
                with os.scandir(os.path.join(self.root, directory)) as listing:
                    entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in listing]
            except OSError:
                continue  # unreadable or gone: the paths it held are not found, so named
            for name, is_directory in entries:
                path = f"{directory}/{name}" if directory else name
                if path == ".git" or path in before.ignored:
                    continue
                if path in before.files:
                    found[path] = _look(os.path.join(self.root, path), before, path, self.oid_size)
                    if not is_directory or path in before.opaque:
                        continue
                elif path not in before.holding and ignore_rules.ignored(
                    before.rules, path, is_directory=is_directory
                ):
                    continue  # ignored by the rules in force before the run
                elif not is_directory:
                    found[path] = _look(os.path.join(self.root, path), before, path)
                    continue
                pending.append(path)
        return found


def find_checkout(where: Path, environ: Mapping[str, str]) -> Checkout | None:
    """The git checkout `where` is in, or None outside one (no `.git` above it: no git run).
    Before the run: git is found on the operator's PATH here, once."""
    if project_file.repository_root(Path(os.path.abspath(where))) is None:
        return None
    found = shutil.which("git", path=environ.get("PATH", os.defpath))
    if found is None:
        raise TrackedError("git is not on PATH")
    program = os.path.realpath(found)
    env = dict(HERMETIC)
    excludes = _global_excludes(program, str(where), environ)
    trusted = tuple(
        entry
        for scope in ("--system", "--global")
        for entry in _operator_setting(program, str(where), environ, scope, "safe.directory")
    )
    fixed = _fixed(trusted)
    asked = [*fixed, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]
    try:
        said = _git(program, str(where), env, [*asked, "--show-object-format"])
    except TrackedError:  # git before 2.25 knows only sha1, and not the question
        said = _git(program, str(where), env, asked) + b"sha1\n"
    lines = os.fsdecode(said).splitlines()
    if len(lines) != 4:
        raise TrackedError(f"git rev-parse said {lines!r}, not the checkout's top directory")
    top, git_dir, common, object_format = lines
    common = os.path.normpath(os.path.join(os.path.abspath(where), common))
    oid_size = 32 if object_format == "sha256" else 20
    return Checkout(top, git_dir, common, program, env, excludes, oid_size, trusted)


def _fixed(trusted: Sequence[str]) -> list[str]:
    """The settings every git run here has, whatever any config says: no monitor, hook or
    untracked cache; and the operator's own safe.directory entries (a checkout of another
    owner they trust, as in a CI container), which git takes only from protected config."""
    return [*_FIXED, *(part for entry in trusted for part in ("-c", f"safe.directory={entry}"))]


def _operator_setting(
    program: str, where: str, environ: Mapping[str, str], scope: str, key: str
) -> list[str]:
    """Every value of `key` in the operator's `scope` config, before the run (`git config`
    reads configuration and runs nothing)."""
    env = {name: environ[name] for name in _OPERATOR if name in environ}
    env.update(GIT_OPTIONAL_LOCKS="0", LANG="C", LC_ALL="C")
    try:
        said = _git(program, where, env, ["config", scope, "--get-all", key])
    except TrackedError:
        return []  # unset (git exits 1)
    return [line for line in os.fsdecode(said).splitlines() if line]


def changes(
    checkout: Checkout,
    before: State,
    after: Mapping[str, Print | None],
    *,
    outputs: Sequence[str] = (),
    skip: Sequence[str] = (),
) -> list[Change]:
    """What the run changed in the working tree and the `.git` metadata: each path named,
    outside `outputs` (checkout-relative entries, or absolute paths) and `skip` (absolute)."""
    found = []
    for path in sorted(before.files.keys() | after.keys()):
        listed = path in before.files
        was, now = before.files.get(path), after.get(path)
        if listed and _same(was, now):
            continue  # as it was before the run (clean, or as dirty): not the run's doing
        if _left_out(os.path.join(checkout.root, path), path, outputs, skip):
            continue
        if not listed:
            change = "added"
        elif now is None:
            change = "deleted"
        else:
            change = "modified"
        found.append(Change(path, change, checkout.root))
    now_metadata = checkout.metadata(before.metadata)
    for path, (meaning, held) in before.metadata.items():
        if not _held_same(meaning, held, now_metadata.get(path, (meaning, None))[1]):
            found.append(Change(path, f"modified ({MEANINGS[meaning]})", checkout.root))
    return found


def _held_same(meaning: str, was: object, now: object) -> bool:
    if meaning == "index" and isinstance(was, tuple) and isinstance(now, tuple):
        return bool(was[1] == now[1])  # the entries, not the cached stat fields
    return was == now


def _same(was: Print | None, now: Print | None) -> bool:
    if was is None or now is None:
        return was is now
    if was[:2] != now[:2]:
        return False  # another type, or the exec bit (what git records of the mode)
    if was[0] == stat.S_IFDIR:
        return True  # a submodule or nested repository: an entry, not looked into
    if was[6] is not None or now[6] is not None:
        return was[6] == now[6]  # the bytes (a link: its target)
    return was == now  # not hashed: the stat fields decide


def _print(
    path: str,
    *,
    budget: list[int] | None = None,
    content: bool = True,
    blob: tuple[bytes, tuple[int, ...]] | None = None,
    index_mtime: int = 0,
    oid_size: int = 20,
) -> Print | None:
    """`path` as it is now, never through a link; None when nothing is there. A file the
    index holds as clean (`blob`: its cached stat fields match, and it is older than the
    index, git's own rule) is not read: its content is the index's object."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return (0, False, 0, 0, 0, 0, "unreadable")
    mode = status.st_mode
    kind = stat.S_IFMT(mode)
    fields = (kind, bool(mode & stat.S_IXUSR), status.st_size, status.st_ino,
              status.st_mtime_ns, status.st_ctime_ns)  # fmt: skip
    if stat.S_ISLNK(mode):
        return (*fields, "-> " + _readlink(path))
    if not stat.S_ISREG(mode) or not content or status.st_size > HASH_MAX_FILE:
        return (*fields, None)
    if blob is not None and _matches(status, blob[1], index_mtime):
        return (*fields, f"blob {blob[0].hex()}")
    if budget is not None:
        if budget[0] < status.st_size:
            return (*fields, None)
        budget[0] -= status.st_size
    return (*fields, _digest(path))


def _matches(status: os.stat_result, cached: tuple[int, ...], index_mtime: int) -> bool:
    now = (int(status.st_ctime), int(status.st_mtime), status.st_ino, status.st_size)
    masked = tuple(value & 0xFFFFFFFF for value in now)  # as git keeps them: 32 bits
    return masked == cached and int(status.st_mtime) < index_mtime  # else git reads it too


def _look(path: str, before: State, relative: str, oid_size: int = 20) -> Print | None:
    """A path after the run: read again when the snapshot knew its content and its stat
    fields moved, or its ctime was within the snapshot's tick (a write then leaves them as
    they were); as a git object when the snapshot took it from the index."""
    was = before.files.get(relative)
    now = _print(path, content=False)
    if now is None or now[6] is not None or was is None or was[6] is None:
        return now  # gone, a link, new, or not hashed before: the stat fields decide
    if now[:6] == was[:6] and was[5] < before.recent_ns:
        return was  # not touched since (ctime cannot be set back)
    if was[6].startswith("blob ") and now[2] <= HASH_MAX_FILE:
        return (*now[:6], "blob " + _object_id(path, oid_size))
    return _print(path)


def _object_id(path: str, oid_size: int) -> str:
    """The git object id of `path`'s bytes as a blob (what `git hash-object` says, no filter)."""
    summary = hashlib.sha256() if oid_size == 32 else hashlib.sha1()  # git's object ids
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "unreadable"
    try:
        data = b""
        while chunk := os.read(fd, 1024 * 1024):
            data += chunk
    except OSError:
        return "unreadable"
    finally:
        os.close(fd)
    summary.update(b"blob %d\0" % len(data) + data)
    return summary.hexdigest()


def _digest(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "unreadable"
    summary = hashlib.blake2b(digest_size=16)
    try:
        while chunk := os.read(fd, 1024 * 1024):
            summary.update(chunk)
    except OSError:
        return "unreadable"
    finally:
        os.close(fd)
    return summary.hexdigest()


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"unreadable ({error.strerror})".encode()
    with open(fd, "rb") as handle:
        try:
            return handle.read()
        except OSError as error:
            return f"unreadable ({error.strerror})".encode()


def _entry(path: str) -> object:
    """The `.git` entry: its type and inode, and its bytes when a file (`gitdir: ...`)."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    held = _read(path) if stat.S_ISREG(status.st_mode) else None
    return (stat.S_IFMT(status.st_mode), status.st_ino, held)


def _packed(path: str, name: str) -> bytes | None:
    data = _read(path)
    if data is None:
        return None
    wanted = b" " + os.fsencode(name)
    for line in data.splitlines():
        if line.endswith(wanted):
            return line
    return None


def _read_rules(path: str, base: str) -> list[ignore_rules.Rule]:
    data = _read(path) if path and path != "/dev/null" else None
    return [] if data is None else ignore_rules.parse(data.decode("utf-8", "replace"), base)


def _paths(listed: bytes) -> list[str]:
    return list(dict.fromkeys(os.fsdecode(p) for p in listed.split(b"\0") if p))


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts))]


def _global_excludes(program: str, where: str, environ: Mapping[str, str]) -> str:
    """The operator's global excludes file (core.excludesFile, else git's default), as it
    stands before the run. `git config --get` reads configuration and runs nothing."""
    env = {name: environ[name] for name in _OPERATOR if name in environ}
    env.update(GIT_OPTIONAL_LOCKS="0", LANG="C", LC_ALL="C")
    try:
        said = _git(program, where, env, ["config", "--path", "--get", "core.excludesFile"])
    except TrackedError:
        said = b""  # unset (git exits 1)
    value = os.fsdecode(said).strip()
    if value:
        return value if os.path.isabs(value) else os.path.join(where, value)
    config = environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(config):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            return "/dev/null"
        config = os.path.join(home, ".config")
    return os.path.join(config, "git", "ignore")


def _git(program: str, where: str, env: Mapping[str, str], args: Sequence[str]) -> bytes:
    try:
        done = subprocess.run(
            [program, "-C", where, *args],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise TrackedError(f"git could not be run ({error})") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        command = next((a for a in args if not a.startswith("-") and "=" not in a), "")
        raise TrackedError(f"git {command} failed: {said[-1] if said else done.returncode}")
    return done.stdout


def _left_out(absolute: str, relative: str, outputs: Sequence[str], skip: Sequence[str]) -> bool:
    if any(roots.matches(relative, o) for o in outputs if not os.path.isabs(o)):
        return True
    return any(roots.under(absolute, o) for o in (*skip, *outputs) if os.path.isabs(o))
