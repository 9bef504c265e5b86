"""A cloudguard.toml the operator has trusted, for tests whose file sets keys that need it.

`cloudguard trust` records a discovered file's path and digest in the user's
state; each test has a store of its own (the root conftest's `XDG_STATE_HOME`),
inherited by the commands it runs.
"""

from __future__ import annotations

from pathlib import Path

from cloudguard import trust_store as trust


def write_trusted(path: Path, text: str) -> Path:
    """Write `text` as `path` (a cloudguard.toml) and trust exactly those bytes."""
    path.write_text(text)
    trust.trust(path, trust.digest(path.read_bytes()))
    return path
