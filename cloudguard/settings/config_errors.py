"""Errors in cloudguard.toml's `[audit]`, `[reap]`, `[history]` and `[notify]` tables, named.

Every command-line option can live in `[audit]`, so a scheduled job is
`cloudguard audit` and nothing else. The file is `--config FILE`, or the
nearest trusted `cloudguard.toml` from the working directory up to the
repository root, then `$HOME` (cloudguard.project_file, which also reads it).
Keys are the long option names (`controller-home`, `fail-on`), declared once
with their parsers in cloudguard.settings.core_options; paths are relative to
the file. An unknown key or a bad value is a `ConfigError` naming the key
(exit 97): a typo must not silently drop a check. The same parsers read the
command line, where a bad value is a usage error (2). Every parser (string,
choice, durations, argv, ...) is the cloud kernel's (cloudguard.cloud.options),
for evidence sources and adapters to share.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cloudguard import project_file


class ConfigError(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


def find_config(start: Path) -> Path | None:
    """The nearest trusted cloudguard.toml: the seal's finder (cloudguard.project_file)."""
    try:
        return project_file.find_project_file(start)
    except project_file.UntrustedFileError as exc:
        raise ConfigError(str(exc.path), exc.reason) from None


def unknown_key(key: str, known: Iterable[str]) -> str:
    """Why `key` is refused, with the closest known key when there is one."""
    import difflib

    known = sorted(known)
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}? (known: {', '.join(known)})"
    return f"unknown key (known: {', '.join(known)})"
