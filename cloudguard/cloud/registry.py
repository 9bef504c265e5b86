"""The installed `CloudAdapter`s, by provider name, loaded once. Stdlib only.

Every per-cloud rule the core applies (tag-name case, billable states, reap
verbs, export parsers, scope display) is asked of the adapter found here. A
provider with no installed adapter, or one that cannot load, gets the
strictest answer: exact tag names, nothing billable known, no reap action.
"""

from __future__ import annotations

import threading
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cloudguard.audit.adapter_interface import CloudAdapter

ENTRY_POINT_GROUP = "cloudguard.adapters"

_loaded: dict[str, CloudAdapter | None] = {}
_lock = threading.Lock()  # sweeps run in threads; each adapter is loaded once


def cloud_adapter(provider: str) -> CloudAdapter | None:
    """The adapter for `provider`; None when none is installed or it cannot load."""
    try:
        return _loaded[provider]
    except KeyError:
        pass
    with _lock:
        if provider not in _loaded:
            _loaded[provider] = _load(provider)
        return _loaded[provider]


def cloud_adapters() -> list[CloudAdapter]:
    """Every installed adapter that loads, in name order (export parsers are tried so)."""
    names = sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
    return [adapter for name in names if (adapter := cloud_adapter(name)) is not None]


def _load(provider: str) -> CloudAdapter | None:
    for entry_point in entry_points(group=ENTRY_POINT_GROUP, name=provider):
        try:
            adapter: CloudAdapter = entry_point.load()()
        except Exception:  # its sweep reports why (providers.ProviderInventory)
            return None
        return adapter
    return None


_case_insensitive: dict[str, bool] = {}


def names_case_insensitive(provider: str) -> bool:
    """Whether tag names and ids compare casefolded. Asked for every tag read of every
    resource, hence its own cache: one dict lookup."""
    try:
        return _case_insensitive[provider]
    except KeyError:
        adapter = cloud_adapter(provider)
        known = _case_insensitive[provider] = adapter is not None and adapter.case_insensitive_names
        return known
