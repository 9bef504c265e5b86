"""Finding `cloudguard.toml`: only where the project and the user live, only if it is theirs.

One finder and one reader for every section (the seal's registry tables,
the audit's `[audit]`, the reaper's `[reap]`): the file is read and parsed
once, each known section is checked to be a table, and each section is
handed to its owner, which validates its own keys. A configuration file
decides where tokens go and which files are written, so it is looked for
in a bounded set of places and trusted only when nobody else could have
written it:

- the starting directory and its parents up to the repository root (the
  nearest directory holding `.git`), or the starting directory alone when
  it is in no repository: a file planted in a shared parent (`/tmp`,
  `/srv/builds`) is never found;
- then `$HOME`.

A candidate that exists must be a regular file owned by the user running
cloudguard and not writable by group or others; anything else is refused
with an error naming it (the callers exit 97), never skipped: a file the
project expects to be read must not silently stop counting.

Stdlib only.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

PROJECT_FILE = "cloudguard.toml"

# Every top-level table cloudguard reads, and who validates its keys.
SECTIONS: dict[str, str] = {
    "seal": "cloudguard.guard.registry",
    "provider": "cloudguard.guard.registry",
    "shims": "cloudguard.guard.registry",
    "hard": "cloudguard.guard.registry",
    "audit": "cloudguard.audit.settings_files",
    "reap": "cloudguard.audit.settings_files",
}


class UntrustedFileError(Exception):
    """A configuration file someone other than the caller could have written."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ProjectFileError(Exception):
    """A configuration file that cannot be read, is not TOML, or has a section that is no table.

    The message names the file (and the section); callers exit 97.
    """

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class ProjectDocument:
    """One parsed cloudguard.toml (or registry file): read once, its sections handed out."""

    def __init__(self, path: Path, text: str, data: Mapping[str, object]) -> None:
        self.path = path
        self.text = text
        self.data = data

    def section(self, name: str) -> dict[str, object]:
        """The `[name]` table (empty when absent); ProjectFileError when it is not a table."""
        table = self.data.get(name, {})
        if not isinstance(table, dict):
            line = next(
                (n for n, text in enumerate(self.text.splitlines(), 1) if _assigns(text, name)), 1
            )
            raise ProjectFileError(self.path, f"line {line}: {name}: must be a table ([{name}])")
        return table


def _assigns(line: str, key: str) -> bool:
    """True for a top-level `key = ...` line (bare or quoted key)."""
    head = line.split("=", 1)[0].strip().strip("\"'")
    return "=" in line and head == key


def read_project_file(path: Path) -> ProjectDocument:
    """Read and parse `path` once; every known section present must be a table."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ProjectFileError(path, f"cannot be read: {error}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProjectFileError(path, f"invalid TOML: {error}") from None
    document = ProjectDocument(path, text, data)
    for name in SECTIONS:
        document.section(name)
    return document


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


def repository_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory or a file)."""
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def find_project_file(start: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """The nearest trusted cloudguard.toml, or None; UntrustedFileError for an untrusted one."""
    for directory in search_directories(start, environ):
        candidate = directory / PROJECT_FILE
        try:
            status = os.lstat(candidate)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise UntrustedFileError(candidate, f"cannot be examined: {error.strerror}") from None
        check_trusted(candidate, status)
        return candidate
    return None


def check_trusted(path: Path, status: os.stat_result) -> None:
    """Refuse a file that is a link, not regular, another user's, or group/other-writable."""
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
