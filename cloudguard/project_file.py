"""Finding `cloudguard.toml`: only where the project and the user live, only if it is theirs.

One finder for both readers (the seal's registry and the audit's `[audit]`
table). A configuration file decides where tokens go and which files are
written, so it is looked for in a bounded set of places and trusted only
when nobody else could have written it:

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
from collections.abc import Iterator, Mapping
from pathlib import Path

PROJECT_FILE = "cloudguard.toml"


class UntrustedFileError(Exception):
    """A configuration file someone other than the caller could have written."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


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
