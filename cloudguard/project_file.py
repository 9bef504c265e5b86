"""Finding `cloudguard.toml`: only where the project and the user live, only if it is theirs.

One finder and one reader for every section (the seal's registry tables,
the audit's `[audit]`, the reaper's `[reap]`): the file is read and parsed
once, each known section is checked to be a table, and each section is
handed to its owner, which validates its own keys. A configuration file
decides where tokens go and which files are written, so it is looked for
in a bounded set of places and read only when nobody else could have
written it:

- the starting directory and its parents up to the repository root (the
  nearest directory holding `.git`), or the starting directory alone when
  it is in no repository: a file planted in a shared parent (`/tmp`,
  `/srv/builds`) is never found;
- then `$HOME`.

A discovered file is opened once, through its directory, and judged by what
was opened (cloudguard.private_files): a regular file (never a link, never a
FIFO waited on) owned by the user running cloudguard, not writable by group
or others, in a directory nobody else can rename files in (the user's or
root's, and not group/other-writable unless sticky). Anything else is
refused with an error naming it (the callers exit 97), never skipped: a file
the project expects to be read must not silently stop counting.

A discovered file is still a repository's file, not the operator's consent:
`ProjectDocument.trusted` says whether the operator trusted these very bytes
(cloudguard.trust_store); the owners of the keys that need it ask. A file named on
the command line is the operator's own act.

Stdlib only.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path

from cloudguard import private_files, trust_store

PROJECT_FILE = "cloudguard.toml"

# Every top-level table cloudguard reads, and who validates its keys.
SECTIONS: dict[str, str] = {
    "seal": "cloudguard.guard.seal_registry",
    "provider": "cloudguard.guard.seal_registry",
    "shims": "cloudguard.guard.seal_registry",
    "hard": "cloudguard.guard.seal_registry",
    "ambient": "cloudguard.guard.seal_registry",
    "outputs": "cloudguard.guard.seal_registry",
    "audit": "cloudguard.settings.resolve",
    "reap": "cloudguard.settings.resolve",
    "history": "cloudguard.settings.resolve",
    "notify": "cloudguard.settings.resolve",
}


class ProjectFileError(Exception):
    """A configuration file that cannot be read, is not TOML, or has a section that is no table.

    The message names the file (and the section); callers exit 97.
    """

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class UntrustedFileError(ProjectFileError):
    """A configuration file someone other than the caller could have written."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, reason)
        self.reason = reason


class ProjectDocument:
    """One parsed cloudguard.toml (or registry file): read once, its sections handed out."""

    def __init__(
        self, path: Path, text: str, data: Mapping[str, object], *, sha256: str, named: bool
    ) -> None:
        self.path = path
        self.text = text
        self.data = data
        self.sha256 = sha256  # of the bytes parsed: what `cloudguard trust` records
        self.named = named  # named on the command line (--config, --registry): the operator's

    @cached_property
    def trusted(self) -> bool:
        """Named by the operator, or these very bytes trusted (`cloudguard trust`); read from
        the trust store only when a key that needs it is present. ProjectFileError (97) when
        the store cannot be trusted itself."""
        if self.named:
            return True
        try:
            return trust_store.is_trusted(self.path, self.sha256)
        except trust_store.TrustStoreError as error:
            why = f"cannot tell whether it is trusted: {error}"
            raise ProjectFileError(self.path, why) from None

    def section(self, name: str) -> dict[str, object]:
        """The `[name]` table (empty when absent); ProjectFileError when it is not a table."""
        table = self.data.get(name, {})
        if not isinstance(table, dict):
            line = next(
                (n for n, text in enumerate(self.text.splitlines(), 1) if _assigns(text, name)), 1
            )
            raise ProjectFileError(self.path, f"line {line}: {name}: must be a table ([{name}])")
        return table


def untrusted_message(path: Path, keys: Mapping[str, trust_store.NeedsTrust]) -> str:
    """Why keys of an untrusted file do not count, and the operator's way to consent."""
    what = "; ".join(f"{key} ({need.why})" for key, need in keys.items())
    return (
        f"not trusted (never trusted, or edited since) and it sets {what}: review it, then "
        f"run `cloudguard trust {path}` (or name it on the command line)"
    )


def _assigns(line: str, key: str) -> bool:
    """True for a top-level `key = ...` line (bare or quoted key)."""
    head = line.split("=", 1)[0].strip().strip("\"'")
    return "=" in line and head == key


def read_project_file(
    path: Path, *, discovered: bool = False, own: bool = False
) -> ProjectDocument:
    """Read and parse `path` once; every known section present must be a table.

    `discovered`: found by `find_project_file`, not named by the operator: opened
    through its directory and refused (UntrustedFileError) unless it is theirs alone.
    `own`: named by the operator (`--config`), and taken as their consent, so it must be
    theirs: what was opened (a link followed) is refused unless it is a regular file of
    theirs that nobody else can write (`--help`: "only your own file").
    """
    raw = _read_discovered(path) if discovered else _read_named(path, own=own)
    try:
        # "utf-8-sig": a byte-order mark (Windows editors write one) is not TOML's to refuse.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ProjectFileError(path, f"cannot be read: not UTF-8 text ({error.reason})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProjectFileError(path, f"invalid TOML: {error}") from None
    except RecursionError:
        raise ProjectFileError(path, "invalid TOML: nested too deeply to read") from None
    document = ProjectDocument(
        path, text, data, sha256=trust_store.digest(raw), named=not discovered
    )
    for name in SECTIONS:
        document.section(name)
    return document


def _read_named(path: Path, *, own: bool = False) -> bytes:
    """A file the operator named: followed if a link, but never a FIFO waited on; with
    `own`, judged by what was opened as a discovered file is (its directory aside: the
    operator chose where it lives)."""
    if path.is_dir():
        candidate = path / PROJECT_FILE
        inside = f" (the file in it: {candidate})" if candidate.is_file() else ""
        raise ProjectFileError(path, f"a directory, not a file: name the file{inside}")
    try:
        with open(private_files.open_regular(path, follow=True), "rb") as handle:
            if own:
                check_trusted(path, os.fstat(handle.fileno()))
            return handle.read()
    except FileNotFoundError:
        raise ProjectFileError(path, "does not exist") from None
    except OSError as error:
        raise ProjectFileError(path, f"cannot be read: {error.strerror or error}") from None


def _read_discovered(path: Path) -> bytes:
    """One open of the file through its directory, then checks on what was opened."""
    try:
        directory = os.open(
            path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        )
    except OSError as error:
        why = f"its directory cannot be opened: {error.strerror}"
        raise UntrustedFileError(path, why) from None
    try:
        check_directory(path, os.fstat(directory))
        try:
            fd = private_files.open_regular(path.name, dir_fd=directory)
        except private_files.UnsafePathError as error:
            if "symbolic link" in str(error):
                raise UntrustedFileError(
                    path, "a symbolic link: refused (a link can be planted)"
                ) from None
            raise UntrustedFileError(path, "not a regular file: refused") from None
        except OSError as error:
            raise UntrustedFileError(path, f"cannot be opened: {error.strerror}") from None
    finally:
        os.close(directory)
    with open(fd, "rb") as handle:
        check_trusted(path, os.fstat(handle.fileno()))
        return handle.read()


def search_directories(start: Path, environ: Mapping[str, str] | None = None) -> Iterator[Path]:
    """Where a project file is looked for, nearest first."""
    start = Path(os.path.abspath(start))
    root = repository_root(start)
    seen = set()
    directory = start
    while True:
        seen.add(directory)
        yield directory
        if root is None or directory == root or directory.parent == directory:
            break
        directory = directory.parent
    home = (os.environ if environ is None else environ).get("HOME")
    if home and Path(os.path.abspath(home)) not in seen:
        yield Path(os.path.abspath(home))


def not_found_message(start: Path, environ: Mapping[str, str] | None = None) -> str:
    """Where `find_project_file` looked, for saying that it found nothing."""
    start = Path(os.path.abspath(start))
    root = repository_root(start)
    if root is None:
        where = f"in {start} (not inside a git repository, so no parent is searched)"
    elif root == start:
        where = f"in {start} (the repository root)"
    else:
        where = f"from {start} up to the repository root {root}"
    home = (os.environ if environ is None else environ).get("HOME")
    return f"no {PROJECT_FILE} {where}" + (f", nor in $HOME ({home})" if home else "")


def repository_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory or a file)."""
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def find_project_file(start: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """The nearest cloudguard.toml, or None. Only a name: what it is is judged when it is
    opened (`read_project_file(..., discovered=True)`); UntrustedFileError when a
    candidate cannot even be looked at."""
    for directory in search_directories(start, environ):
        candidate = directory / PROJECT_FILE
        try:
            os.lstat(candidate)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise UntrustedFileError(candidate, f"cannot be examined: {error.strerror}") from None
        return candidate
    return None


def check_directory(path: Path, status: os.stat_result) -> None:
    """Refuse a directory where another user could swap the file between two of our reads:
    one owned by someone else (root excepted), or group/other-writable without the sticky bit."""
    where = path.parent
    if status.st_uid not in (os.geteuid(), 0):
        raise UntrustedFileError(
            path,
            f"its directory {where} is owned by uid {status.st_uid}: refused (its owner "
            "could replace the file)",
        )
    writable = status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not status.st_mode & stat.S_ISVTX:
        raise UntrustedFileError(
            path,
            f"its directory {where} is writable by group or others without the sticky bit "
            f"(mode {stat.S_IMODE(status.st_mode):o}): refused (another user could swap the "
            f"file; chmod go-w {where})",
        )


def check_trusted(path: Path, status: os.stat_result) -> None:
    """Refuse a file that is not regular, another user's, or group/other-writable."""
    if stat.S_ISLNK(status.st_mode):
        raise UntrustedFileError(path, "a symbolic link: refused (a link can be planted)")
    if not stat.S_ISREG(status.st_mode):
        raise UntrustedFileError(path, "not a regular file: refused")
    if status.st_uid != os.geteuid():
        raise UntrustedFileError(
            path,
            f"owned by uid {status.st_uid}, not by the user running cloudguard "
            f"(uid {os.geteuid()}): refused (someone else's file cannot configure this run)",
        )
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UntrustedFileError(
            path,
            f"writable by group or others (mode {stat.S_IMODE(status.st_mode):o}): "
            "refused (chmod go-w it)",
        )
