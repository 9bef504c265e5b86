"""The operator's consent to a discovered cloudguard.toml: its path and sha256, in their own state.

A file in a repository is written by whoever can open a pull request; the
keys that run a program, open the seal or widen what is trusted
(`NeedsTrust`, declared by each key's owner) take effect from a file
cloudguard found on its own only once the operator trusted that exact file,
as `direnv allow` and `mise trust` do: `cloudguard trust FILE` records the
file's absolute path and the SHA-256 of its bytes in
`$XDG_STATE_HOME/cloudguard/trusted.json` (default
`~/.local/state/cloudguard/trusted.json`). An edit changes the digest and the
file is untrusted again. A file named on the command line (`--config`,
`--registry`) is the operator's own act and needs no entry.

The store is the user's alone: read only when it is a regular file of their
own that nobody else can write, and written whole (a new 0600 file renamed
over the old one, under a lock), never edited in place. Stdlib only.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cloudguard import private_files

STORE_NAME = "trusted.json"
SCHEMA = "cloudguard.trusted"
VERSION = 1


@dataclass(frozen=True)
class NeedsTrust:
    """A key a discovered cloudguard.toml may set only once the operator trusted the file.

    `why`: what the key can do, as the refusal says it ("runs a program with your
    environment"). `ignored`: while the file is untrusted the key is ignored and
    cloudguard says so (without it cloudguard is only stricter: a closed door, the
    report on stdout). `reported`: the key takes effect all the same, and every report
    head and plan names the file and the key (a key that describes the project's fleet,
    its tag names or evidence, and so can hide a finding: ignoring it would judge
    another fleet). Neither: the command refuses (97), since ignoring the key would
    change its result silently.
    """

    why: str
    ignored: bool = False
    reported: bool = False


class TrustStoreError(Exception):
    """The store cannot be read or written, or someone else could have written it (97)."""


@dataclass(frozen=True)
class Trusted:
    path: str  # absolute, as found
    sha256: str  # hex digest of the bytes the operator trusted
    at: str  # when (UTC, ISO 8601)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def state_directory(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/cloudguard`, or `~/.local/state/cloudguard` (a relative
    XDG_STATE_HOME is invalid by the XDG spec, and ignored)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".local", "state")
    return Path(base) / "cloudguard"


def store_path(environ: Mapping[str, str] | None = None) -> Path:
    return state_directory(environ) / STORE_NAME


def read_store(environ: Mapping[str, str] | None = None) -> dict[str, Trusted]:
    """Every trusted file by path; empty when there is no store yet."""
    path = store_path(environ)
    try:
        fd = private_files.open_own(path, os.O_RDONLY)
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise TrustStoreError(f"trust store {path}: {error}: refused") from None
    with open(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise TrustStoreError(
                f"trust store {path} is writable by group or others (mode "
                f"{stat.S_IMODE(mode):o}): refused (anyone who can write it can trust a file)"
            )
        raw = handle.read()
    return _parse(path, raw)


def _parse(path: Path, raw: bytes) -> dict[str, Trusted]:
    try:
        document = json.loads(raw)
        if document.get("schema") != SCHEMA or document.get("version") != VERSION:
            raise ValueError(f"not a {SCHEMA} v{VERSION} document")
        entries = {
            entry["path"]: Trusted(str(entry["path"]), str(entry["sha256"]), str(entry["at"]))
            for entry in document["trusted"]
        }
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise TrustStoreError(f"trust store {path} is malformed ({error}): refused") from None
    return entries


def key(path: Path) -> str:
    """How the store names a file: absolute, its directory's symbolic links resolved (the
    commands find it from the physical working directory)."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


def is_trusted(path: Path, sha256: str, environ: Mapping[str, str] | None = None) -> bool:
    entry = read_store(environ).get(key(path))
    return entry is not None and entry.sha256 == sha256


def trust(path: Path, sha256: str, environ: Mapping[str, str] | None = None) -> Trusted:
    """Record `path` with the digest of the bytes the operator reviewed."""
    entry = Trusted(key(path), sha256, datetime.now(UTC).isoformat())
    with _locked(environ) as entries:
        entries[entry.path] = entry
    return entry


def revoke(path: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Forget `path`; False when it was not trusted."""
    with _locked(environ) as entries:
        return entries.pop(key(path), None) is not None


@contextmanager
def _locked(environ: Mapping[str, str] | None) -> Iterator[dict[str, Trusted]]:
    """The entries, read and written back under an exclusive lock on the state directory."""
    directory = state_directory(environ)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise TrustStoreError(f"trust store directory {directory}: {error}") from None
    try:
        status = os.fstat(fd)
        if status.st_uid != os.geteuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise TrustStoreError(
                f"trust store directory {directory} is not yours alone (uid {status.st_uid}, "
                f"mode {stat.S_IMODE(status.st_mode):o}): refused"
            )
        fcntl.flock(fd, fcntl.LOCK_EX)
        entries = read_store(environ)
        yield entries
        _write(directory, entries)
    finally:
        os.close(fd)


def _write(directory: Path, entries: Mapping[str, Trusted]) -> None:
    document = {
        "schema": SCHEMA,
        "version": VERSION,
        "trusted": [vars(entry) for entry in sorted(entries.values(), key=lambda e: e.path)],
    }
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".trusted-", suffix=".tmp")
    try:  # mkstemp: O_EXCL, 0600
        with open(handle, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, directory / STORE_NAME)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
