"""Patch a module when it is imported, without importing it ourselves.

The guards must cover botocore and azure-core whether they were imported
before the guards (patched at once) or after (patched the moment their
module finishes executing). Importing them eagerly would cost every test
session and every sealed Python child 100+ ms for SDKs it may never use.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    Patch = Callable[[ModuleType], None]

_pending: dict[str, Patch] = {}


class _PatchOnImport:
    """A meta-path finder that finds nothing itself: it wraps the real loader's exec_module."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        patch = _pending.get(name)
        if patch is None:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original(module)
            if module.__name__ == name and _pending.pop(name, None) is not None:
                patch(module)

        # An instance attribute: the loader keeps its type (inspect, importlib.resources use it).
        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


_finder = _PatchOnImport()


def when_imported(name: str, patch: Patch) -> None:
    """Run `patch(module)` now if `name` is imported, else right after it is."""
    module = sys.modules.get(name)
    if module is not None:
        _pending.pop(name, None)
        patch(module)
        return
    _pending[name] = patch
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def forget(name: str) -> None:
    _pending.pop(name, None)
    if not _pending and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
