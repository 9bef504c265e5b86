"""`cloudguard doctor`: assert, as live facts about this process, that the seal holds.

Each check reads the current environment and filesystem; nothing is
probed by calling the thing it guards.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from cloudguard.documents import reach_log
from cloudguard.guard import reach
from cloudguard.guard.registry import Registry
from cloudguard.guard.seal import (
    PROVIDER_SHIM,
    SEAL_DIR_VARIABLE,
    SITECUSTOMIZE_DIR,
    Seal,
    policy,
)

MARKERS = ("# cloudguard refusing shim", "# cloudguard refusing provider")


def problems(environ: Mapping[str, str], registry: Registry) -> Iterator[str]:
    """Every way in which the seal does not hold, each a named reason."""
    log = environ.get(reach.LOG_VARIABLE)
    if not log:
        yield (
            f"{reach.LOG_VARIABLE} is not set: no reach log is armed. doctor checks a sealed "
            "process: run it under the seal, `cloudguard run -- cloudguard doctor`"
        )
    else:
        try:
            reach_log.read(log)
        except reach_log.ReachLogError as error:
            yield str(error)
    root = environ.get(SEAL_DIR_VARIABLE)
    if not root or not Path(root, "bin").is_dir():
        yield f"{SEAL_DIR_VARIABLE} does not name a live seal directory ({root or 'unset'})"
        return
    seal = Seal(Path(root))
    for name in policy(registry, seal).identity_vars(environ):
        yield f"identity variable {name} is set (the seal drops it)"
    for name, value in seal.redirections().items():
        if environ.get(name) != value:
            yield f"{name} is not redirected by the seal (expected {value!r})"
    for variable in registry.provider_variables:
        bound = environ.get(variable, "")
        words = bound.split()
        if not words or Path(words[0]).name != PROVIDER_SHIM or not _is_refuser(words[0]):
            yield f"{variable} is not bound to the refusing provider ({bound or 'unset'})"
    python_path = environ.get("PYTHONPATH", "").split(os.pathsep)
    if python_path[0] != str(SITECUSTOMIZE_DIR):
        yield (
            f"PYTHONPATH does not start with the in-process guards ({SITECUSTOMIZE_DIR}): "
            "Python children would run unguarded"
        )
    search_path = environ.get("PATH", "")
    for tool in registry.shims:
        found = shutil.which(tool, path=search_path)
        if found is None or Path(found).parent != seal.bin_dir or not _is_refuser(found):
            yield f"`{tool}` resolves to {found or 'nothing'}, not the guard in {seal.bin_dir}"


def _is_refuser(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return os.access(path, os.X_OK) and any(marker in head for marker in MARKERS)
