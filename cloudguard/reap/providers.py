"""Reapers come from the adapters the audit already uses (`cloudguard.adapters` entry points).

`reaper(request) -> Reaper` is part of the `CloudAdapter` protocol; the
request is the audit's `SweepRequest` (credential, endpoint, CA bundle), so
reaping uses exactly the identity and endpoint options the audit takes.
"""

from __future__ import annotations

from cloudguard.audit import providers as audit_providers
from cloudguard.audit.adapter_interface import CloudAdapter
from cloudguard.audit.model import SweepRequest
from cloudguard.reap.model import Reaper, ReaperError, ReaperUnavailable


def open_reaper(name: str, request: SweepRequest) -> Reaper:
    source = f"provider {name}"
    installed = audit_providers.installed_adapters()  # the one list the audit uses too
    entry_point = installed.get(name)
    if entry_point is None:
        shown = ", ".join(sorted(installed)) or "none installed"
        raise ReaperUnavailable(source, f"not installed (installed: {shown})")
    try:
        adapter: CloudAdapter = entry_point.load()()
    except Exception as exc:  # an adapter that cannot load cannot be trusted to act
        raise ReaperUnavailable(source, f"cannot load {entry_point.value}: {exc!r}") from exc
    if not callable(getattr(type(adapter), "reaper", None)):
        # Not the whole CloudAdapter protocol (a sweep-only plugin): never guess how to act.
        raise ReaperUnavailable(source, f"{entry_point.value} cannot reap (no reaper())")
    try:
        reaper: Reaper = adapter.reaper(request)
    except ReaperError:
        raise
    except Exception as exc:
        raise ReaperUnavailable(source, f"cannot start its reaper: {exc!r}") from exc
    return reaper
