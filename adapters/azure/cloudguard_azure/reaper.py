"""The Azure side of `cloudguard reap apply`: read one resource live, act on it.

Reads with ARM GET, one resource at a time (`virtual_machines.get(...,
expand="instanceView")` for tags and power state in one call, `disks.get`),
never from a listing or Resource Graph, which can lag ARM. Acts with the
long-running operations (`begin_deallocate`, `begin_delete`) and waits for
them to finish: "done" means ARM said Succeeded. The credential and client
options are the sweep's (`credentials.build`, `--management-endpoint`,
`--ca-bundle`), so the same loopback and credential rules hold. SDK imports
live inside the functions.
"""

from __future__ import annotations

import re
from typing import Any

from cloudguard.audit.model import Resource, SweepRequest
from cloudguard.reap.model import (
    ActionError,
    PlanItem,
    ReadError,
    ReaperUnavailable,
)
from cloudguard_azure import credentials, normalise
from cloudguard_azure.adapter import arm_scope, describe_error, preflight

_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<group>[^/]+)"
    r"/providers/Microsoft\.Compute/(?P<type>virtualMachines|disks)/(?P<name>[^/]+)$",
    re.IGNORECASE,
)
_TYPES = {"vm": "virtualmachines", "disk": "disks"}
# Deallocating a VM takes minutes; past this the outcome is unknown (a failure to look at).
DEFAULT_LRO_TIMEOUT = 1800.0


class AzureReaper:
    """One reaper per `reap apply` run; one compute client per subscription, closed at the end."""

    def __init__(
        self,
        request: SweepRequest,
        client_options: dict[str, Any],
        *,
        credential: Any | None = None,
        lro_timeout: float = DEFAULT_LRO_TIMEOUT,
    ) -> None:
        self._options = {**client_options, "user_agent": "cloudguard-reap"}
        self._lro_timeout = lro_timeout
        self._clients: dict[str, Any] = {}
        self._owned = credential is None
        if credential is None:
            name = request.credential or "default"
            source = f"azure credential {name}"
            try:
                credential = credentials.build(request.credential, request.endpoint)
            except ValueError as exc:
                raise ReaperUnavailable(source, f"cannot be used: {exc}") from exc
            # One token up front: a missing identity stops the run before any item.
            if refused := preflight(credential, name, arm_scope(request.endpoint)):
                _close(credential)
                raise ReaperUnavailable(source, refused)
        self._credential = credential

    def current(self, item: PlanItem) -> Resource | None:
        from azure.core.exceptions import ResourceNotFoundError

        sub, group, name = _address(item, ReadError)
        compute = self._compute(sub)
        try:
            if item.kind == "vm":
                vm = compute.virtual_machines.get(group, name, expand="instanceView")
                return normalise.vm_resource(vm, sub)
            return normalise.disk_resource(compute.disks.get(group, name), sub)
        except ResourceNotFoundError:
            return None
        except Exception as exc:  # 403, throttled past retries, unreadable: unknown state
            raise ReadError(f"azure {item.kind} {item.id}", describe_error(exc)) from exc

    def act(self, item: PlanItem, action: str) -> None:
        sub, group, name = _address(item, ActionError)
        compute = self._compute(sub)
        source = f"azure {item.kind} {item.id}"
        try:
            if item.kind == "vm" and action == "deallocate":
                poller = compute.virtual_machines.begin_deallocate(group, name)
            elif item.kind == "vm" and action == "delete":
                poller = compute.virtual_machines.begin_delete(group, name)
            elif item.kind == "disk" and action == "delete":
                poller = compute.disks.begin_delete(group, name)
            else:
                raise ActionError(source, f"no action {action!r} for a {item.kind}")
            poller.result(timeout=self._lro_timeout)
            if not poller.done():
                raise ActionError(
                    source,
                    f"{action} did not finish within {self._lro_timeout:.0f} s: outcome unknown",
                )
        except ActionError:
            raise
        except Exception as exc:
            raise ActionError(source, f"{action} failed: {describe_error(exc)}") from exc

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        if self._owned:
            _close(self._credential)

    def _compute(self, subscription: str) -> Any:
        from azure.mgmt.compute import ComputeManagementClient

        key = subscription.casefold()
        if key not in self._clients:
            self._clients[key] = ComputeManagementClient(
                self._credential, subscription, **self._options
            )
        return self._clients[key]


def _address(item: PlanItem, error: type[ReadError] | type[ActionError]) -> tuple[str, str, str]:
    """(subscription, group, name) from the item's ARM id, which must agree with the item:
    the id is what the audit saw, and a hand-edited plan must not redirect an action."""
    match = _ID.match(item.id)
    source = f"azure {item.kind} {item.id}"
    if match is None or match["type"].casefold() != _TYPES.get(item.kind):
        raise error(source, f"not an ARM id of a {item.kind}")
    if item.account and match["sub"].casefold() != item.account.casefold():
        raise error(source, f"id names subscription {match['sub']}, the item {item.account}")
    return match["sub"], match["group"], match["name"]


def _close(credential: Any) -> None:
    if hasattr(credential, "close"):
        credential.close()
