"""The Google Cloud side of `cloudguard reap apply`: read one Compute resource live, act on it.

What it acts on: instances (stop, or delete); persistent disks, zonal or regional,
addresses, regional or global, and snapshots (delete). Every other kind a plan lists
with the `gcloud` command a person would run (cloudguard_gcp.delete_commands).

Each item is bound to Compute Engine's numeric id, which the plan carries as `uid` (the
sweep reads it from Compute's listings): the read (`instances.get`, `disks.get`,
`regionDisks.get`, `addresses.get`, `globalAddresses.get`, `snapshots.get`), and the
action (`stop`, `delete`) name that id where the API takes a name or an id, so a
resource deleted and re-created under the planned name since the review is never the
one read or acted on: it answers 404, "gone". The read carries the labels (read as
tags), an instance's `deletionProtection` (a protection), which of its disks outlive it
(`autoDelete` false: they go on billing), a disk's `users` and an address's `status`
(in use: attached, never deleted). A snapshot has no users: a disk or an image made
from it is its own copy, and deleting it moves what later snapshots of the same disk
need into them (Compute's snapshots are incremental, never broken by a delete).

The action carries a `requestId` (a UUID of its own), and a transient failure (429, 5xx,
a dropped connection) is asked again with the same one, on the sweep's `--retries`
budget: Compute carries out a request once per id and answers a repeat with the first
one's Operation, so a lost answer is never an action done twice, nor a delete failed
because it was done. It returns when its Operation says DONE (zone, region or global
Operations' `wait`, which may be retried: it only reads), within the item's budget
(`--item-budget`, else OPERATION_WAIT seconds): an Operation not seen to finish is
`ActionUnfinished` (75), one that ended in error `ActionError` naming Compute's code.
Compute's own refusals (a disk or address in use, `resourceInUseByAnotherResource`; an
instance under deletion protection, `invalidResourceUsage`) are failures logged with
Google's words: nothing was done.

The clients are the sweep's (cloudguard_gcp.clients: endpoint, CA bundle, no proxy for
loopback), and so is the identity (cloudguard_gcp.credentials: the one endpoint rule).
Not the client library's own Operation polling: `ExtendedOperation.result()` polls
through an Operations client the library makes with no `client_options`, which would
send the token to the default endpoint whatever `--management-endpoint` said.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cloudguard.cloud import kinds
from cloudguard.cloud.reaping import (
    ActionError,
    ActionUnfinished,
    Live,
    ReadError,
    ReaperUnavailable,
    Target,
)
from cloudguard.cloud.records import SweepRequest
from cloudguard_gcp import clients, compute_state, credentials
from cloudguard_gcp.export import COMPUTE, last_segment
from cloudguard_gcp.options import GCP_KEY_FILE

OPERATION_WAIT = 600.0  # seconds an action's Operation is waited for without --item-budget
# Compute's names (RFC 1035) and numeric ids, as its path parameters take them.
_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
_UID = re.compile(r"^[1-9][0-9]{0,19}$")
# A project id, optionally domain-scoped (`example.com:project`).
_PROJECT = r"(?:[a-z0-9][-a-z0-9.]{0,62}:)?[a-z][-a-z0-9]{4,28}[a-z0-9]"
_FULL_NAME = re.compile(
    rf"^{re.escape(COMPUTE)}projects/({_PROJECT})/(?:(zones|regions)/({_NAME})|global)/"
    rf"(instances|disks|addresses|snapshots)/({_NAME})$"
)
# (kind, scope, collection) the reaper acts on -> the API's collection (its client).
_CLIENT = {
    (kinds.VM, "zones", "instances"): "instances",
    (kinds.DISK, "zones", "disks"): "disks",
    (kinds.DISK, "regions", "disks"): "regionDisks",
    (kinds.PUBLIC_IP, "regions", "addresses"): "addresses",
    (kinds.PUBLIC_IP, "global", "addresses"): "globalAddresses",
    (kinds.SNAPSHOT, "global", "snapshots"): "snapshots",
}
_ACTIONS = {(kinds.VM, "stop"), (kinds.VM, "delete"), (kinds.DISK, "delete"),
            (kinds.PUBLIC_IP, "delete"), (kinds.SNAPSHOT, "delete")}  # fmt: skip
_PARAMETER = {"instances": "instance", "disks": "disk", "addresses": "address",
              "snapshots": "snapshot"}  # fmt: skip
_PLACE = {"zones": "zone", "regions": "region"}  # the request field naming where (global: none)


@dataclass(frozen=True)
class _Address:
    project: str
    scope: str  # zones | regions | global
    where: str  # the zone or the region ("" when global)
    collection: str  # instances | disks | addresses | snapshots
    uid: str
    client: str  # the API's collection, its client's name (`regionDisks`, `globalAddresses`)

    @property
    def operations(self) -> str:
        """The Operations collection that says when an action on it is done."""
        return f"{self.scope.removesuffix('s')}Operations"  # zone, region, global

    def placed(self) -> dict[str, str]:
        """The request fields naming the project and, unless global, the zone or region."""
        place = _PLACE.get(self.scope)
        return {"project": self.project, **({place: self.where} if place else {})}

    def asked(self) -> dict[str, str]:
        """The request's fields: the resource by its numeric id."""
        return {**self.placed(), _PARAMETER[self.collection]: self.uid}


def _address(item: Target, error: type[ReadError] | type[ActionError]) -> _Address:
    """The planned item's place and id, refused unless it is one of Compute's own."""
    source = f"gcp {item.kind} {item.id}"
    found = _FULL_NAME.match(item.id)
    if found is None or (item.kind, found.group(2) or "global", found.group(4)) not in _CLIENT:
        raise error(source, f"not a Compute Engine {item.kind} cloudguard reaps")
    project, scope, where, collection = found.group(1, 2, 3, 4)
    scope, where = scope or "global", where or ""
    if item.account != project:
        raise error(source, f"the item names project {item.account!r}, its name {project!r}")
    uid = str(getattr(item, "uid", ""))  # a plan item's (cloudguard.documents.plan.PlanItem)
    if not _UID.match(uid):
        raise error(
            source,
            "the plan names no Compute Engine numeric id for it (uid), which binds an action "
            "to the reviewed resource: make a new plan from a new live audit",
        )
    client = _CLIENT[(item.kind, scope, collection)]
    return _Address(project, scope, where, collection, uid, client)


class GcpReaper:
    def __init__(self, request: SweepRequest, clock: Callable[[], float] = time.monotonic) -> None:
        self._request = request
        key_file = GCP_KEY_FILE.value_in(request.settings)
        try:
            self._identity = credentials.build(request.credential, key_file, request.endpoint)
        except credentials.CredentialRefused as refused:
            raise ReaperUnavailable(
                f"gcp credential {credentials.describe(request.credential, key_file)}",
                f"cannot be used: {refused}",
            ) from None
        self._clients: dict[str, Any] = {}
        self._clock = clock
        budget = request.item_budget.total_seconds() if request.item_budget else None
        self._budget = budget
        self._started = clock()

    def current(self, item: Target) -> Live | None:
        from google.api_core import exceptions

        address = _address(item, ReadError)
        self._started = self._clock()  # the item's budget runs from its first read
        source = f"gcp {item.kind} {item.id}"
        try:
            method = self._client(address.client).get
            found = method(
                request=address.asked(),
                retry=clients.retry(self._request),
                timeout=self._timeout(),
            )
        except exceptions.NotFound:
            return None  # no resource has this id: deleted (a re-created one has another)
        except Exception as exc:  # denied, throttled past the budget, broken: cannot tell
            raise ReadError(source, clients.describe_error(exc)) from exc
        where = f"gcp:projects/{address.project}"
        if address.collection == "instances":
            return Live(
                compute_state.instance(found, where),
                protections=(
                    ("Compute Engine deletion protection (deletionProtection) is on",)
                    if found.deletion_protection
                    else ()
                ),
                left_billing=tuple(
                    f"persistent disk {last_segment(disk.source)} (autoDelete off)"
                    for disk in found.disks
                    if not disk.auto_delete and disk.source
                ),
            )
        if address.collection == "snapshots":
            return Live(compute_state.snapshot(found, where))
        users = [last_segment(user) for user in found.users]
        if address.collection == "disks":
            return Live(compute_state.disk(found, where), attached_to=", ".join(users) or None)
        in_use = users or found.status == "IN_USE"
        return Live(
            compute_state.address(found, where),
            attached_to=(", ".join(users) or f"status {found.status}") if in_use else None,
        )

    def act(self, item: Target, action: str) -> None:
        address = _address(item, ActionError)
        source = f"gcp {item.kind} {item.id}"
        if (item.kind, action) not in _ACTIONS:
            raise ActionError(source, f"no action {action!r} for a {item.kind}")
        client = self._client(address.client)
        send = client.stop_unary if action == "stop" else client.delete_unary
        # One requestId for every attempt of this action: Compute carries out a request once
        # per id (for at least an hour) and answers a repeat with the first one's Operation,
        # so an answer lost to a 503 or a dropped connection is asked again, never done twice.
        asked = {**address.asked(), "request_id": str(uuid.uuid4())}
        try:
            operation = send(request=asked, retry=clients.retry(self._request),
                             timeout=self._timeout())  # fmt: skip
        except Exception as exc:  # refused (in use, protected, denied) or lost: not done
            raise ActionError(source, f"{action} failed: {clients.describe_error(exc)}") from exc
        self._wait(source, action, address, operation)

    def _wait(self, source: str, action: str, address: _Address, operation: Any) -> None:
        """Until the action's Operation says DONE, within the item's budget."""
        wait = self._client(address.operations)
        limit = self._budget if self._budget is not None else OPERATION_WAIT
        while operation.status != operation.Status.DONE:
            left = limit - (self._clock() - self._started)
            if left <= 0:
                raise ActionUnfinished(
                    source,
                    f"{action} sent (operation {operation.name}), not seen to finish within "
                    f"{limit:g} s (the item's budget, --item-budget, or {OPERATION_WAIT:g} s at "
                    "most): outcome unknown",
                )
            try:
                operation = wait.wait(
                    request={**address.placed(), "operation": operation.name},
                    retry=clients.retry(self._request),
                    timeout=min(clients.TIMEOUT, left),
                )
            except Exception as exc:
                raise ActionUnfinished(
                    source,
                    f"{action} sent (operation {operation.name}), its end could not be read: "
                    f"{clients.describe_error(exc)}",
                ) from exc
        errors = list(operation.error.errors) if "error" in operation else []
        if errors:
            said = "; ".join(f"{e.code}: {e.message}" for e in errors)
            raise ActionError(
                source, f"{action} failed: Compute's operation ended in error: {said}"
            )

    def _timeout(self) -> float:
        if self._budget is None:
            return clients.TIMEOUT
        return max(0.1, min(clients.TIMEOUT, self._budget - (self._clock() - self._started)))

    def _client(self, kind: str) -> Any:
        if kind not in self._clients:
            self._clients[kind] = clients.compute_client(kind, self._identity, self._request)
        return self._clients[kind]

    def close(self) -> None:
        for client in self._clients.values():
            client.transport.close()
        self._clients.clear()
