"""The one settings boundary: `Settings` -> the policy, the evidence request, a sweep request.

`cloudguard audit` and `cloudguard reap apply` both turn their settings into
what the auditor, the evidence sources and the clouds take here, and nowhere
else. A request carries the options its command takes; an option a command
does not show (the audit's `--retries` in `reap apply`) keeps its default
there, even when cloudguard.toml's shared `[audit]` table sets it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.evidence.registry import evidence_options
from cloudguard.audit.options import OPTIONS, Settings
from cloudguard.cloud.cloud import Cloud
from cloudguard.cloud.options import Option
from cloudguard.cloud.records import SweepRequest
from cloudguard.documents.findings import ORPHAN, UNVERIFIED, AuditPolicy

# Request field <- the core option that sets it.
_POLICY = {
    "task_tag": "task_tag",
    "generation_tag": "generation_tag",
    "grace": "grace",
    "leaked_by": "leaked_by",
    "fail_on": "fail_on",
    "kinds": "kind",
    "require_generation": "require_generation",
}
_SWEEP = {
    "subscriptions": "subscription",
    "all_subscriptions": "all_subscriptions",
    "resource_groups": "resource_group",
    "regions": "region",
    "task_tag": "task_tag",
    "credential": "credential",
    "concurrency": "concurrency",
    "retries": "retries",
    "endpoint": "management_endpoint",
    "ca_bundle": "ca_bundle",
    "item_budget": "item_budget",
    "kinds": "kind",
}
_CORE = {o.name: o for o in OPTIONS}


def audit_policy(settings: Settings) -> AuditPolicy:
    """The knobs classification obeys. `--fail-on unverified` is the default's name
    (unverified resources fail, orphans and leaked too); `--allow-unverified` accepts them."""
    values = _core_values(settings, _POLICY)
    if values.get("fail_on") == UNVERIFIED:
        values["fail_on"] = ORPHAN
    untrusted = settings.untrusted_keys and settings.config_file is not None
    return AuditPolicy(
        **values,
        fail_on_unverified=not settings.allow_unverified,
        untrusted_file=str(settings.config_file) if untrusted else None,
        untrusted_keys=settings.untrusted_keys if untrusted else (),
    )


def evidence_request(settings: Settings) -> EvidenceRequest:
    """Every evidence source's options' values."""
    return EvidenceRequest(**_own_values(settings, evidence_options()))


def sweep_request(settings: Settings, cloud: Cloud) -> SweepRequest:
    """What `cloud` is asked to sweep, or to reap with: the core's live options and the
    cloud's own (`SweepRequest.settings`)."""
    return SweepRequest(
        **_core_values(settings, _SWEEP), settings=_own_values(settings, cloud.options)
    )


def _takes(settings: Settings, option: Option) -> bool:
    return settings.command in option.shown


def _core_values(settings: Settings, fields: dict[str, str]) -> dict[str, Any]:
    return {
        field: getattr(settings, name)
        for field, name in fields.items()
        if _takes(settings, _CORE[name])
    }


def _own_values(settings: Settings, options: Iterable[Option]) -> dict[str, Any]:
    return {o.name: o.value_in(settings.extra) for o in options if _takes(settings, o)}
