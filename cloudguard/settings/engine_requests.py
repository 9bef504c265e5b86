"""The one settings boundary: `Settings` -> the policy, the evidence request, a sweep request.

`cloudguard audit` and `cloudguard reap apply` both turn their settings into
what the auditor, the evidence sources and the clouds take here, and nowhere
else; so do they, and `cloudguard history`, into where the history is
(`history_place`) and what scope an audit keeps in it (`history_scope`). A
request carries the options its command takes; an option a command does not
show (the audit's `--retries` in `reap apply`) keeps its default
there, even when cloudguard.toml's shared `[audit]` table sets it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import typer

from cloudguard import exit_codes
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.audit.evidence.source_registry import evidence_options
from cloudguard.audit.remember import HistoryPlace, open_history
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.cloud import Cloud
from cloudguard.cloud.options import Option
from cloudguard.cloud.records import SweepRequest
from cloudguard.documents.findings import ORPHAN, UNVERIFIED, AuditPolicy
from cloudguard.escape import one_line
from cloudguard.history.errors import HistoryError
from cloudguard.settings import config_errors as cfg
from cloudguard.settings.core_options import OPTIONS, Settings

if TYPE_CHECKING:
    from cloudguard.history.store import HistoryStore  # opened only when the history is on

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


def history_place(settings: Settings) -> HistoryPlace:
    """Where `[history]` says the store is; a table that names it twice is a ConfigError
    (97)."""
    named = [key for key in ("url", "url_env", "path") if getattr(settings, key)]
    if len(named) > 1:
        keys = " and ".join(key.replace("_", "-") for key in named)
        raise cfg.ConfigError("[history]", f"{keys}: give one of url, url-env and path")
    return HistoryPlace(settings.url, settings.url_env, settings.path, settings.busy_timeout)


def open_history_or_exit(settings: Settings, say: Callable[[str], None]) -> HistoryStore:
    """The store `[history]` names, for a command: 97 when `[history]` is wrong, 75 when
    the store cannot be used, each said with `say`."""
    try:
        return open_history(history_place(settings))
    except cfg.ConfigError as exc:
        say(f"invalid config: {exc}")
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc
    except HistoryError as exc:
        say(f"did not run: {one_line(str(exc), 600)}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc


def history_scope(settings: Settings, clouds: Clouds) -> str:
    """`[history] scope`, or what the audit was asked to look at: its providers with the
    options that choose what they sweep, and its inventory files."""
    if settings.scope:
        return settings.scope
    parts = []
    for provider in sorted(set(settings.provider)):
        chosen = [
            f"subscription={','.join(sorted(settings.subscription))}" * bool(settings.subscription),
            "all-subscriptions" * settings.all_subscriptions,
            f"resource-group={','.join(sorted(settings.resource_group))}"
            * bool(settings.resource_group),
            f"region={','.join(sorted(settings.region))}" * bool(settings.region),
            *(
                f"{option.key}={value}"
                for option in clouds.cloud(provider).options
                if (value := option.value_in(settings.extra)) not in (option.default, None)
            ),
        ]
        parts.append(" ".join([provider, *filter(None, chosen)]))
    parts += [
        f"inventory {'stdin' if path == '-' else os.path.abspath(path)}"
        for path in sorted(settings.inventory)
    ]
    return "; ".join(parts)


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
