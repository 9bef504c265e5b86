"""Microsoft.Network's routes: read and delete NICs and public IPs, poll their deletes.

ARM refuses to delete a NIC attached to a VM (`NicInUse`) or a public IP on an
IP configuration (`PublicIPAddressInUse`); a delete is a long-running
operation (202 with Azure-AsyncOperation and Location).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm import operations
from cloudguard_azure.fake_arm.network import models, responses
from cloudguard_azure.fake_arm.network.models import NETWORK
from cloudguard_azure.fake_arm.routing import (
    GROUP,
    SUB,
    Context,
    Request,
    Response,
    accepted,
    arm_error,
    json_response,
    not_found,
    route,
    scope_missing,
)
from cloudguard_azure.fake_arm.wire import async_operation

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.operations import Operation


@route("GET", "nic_get", GROUP + NETWORK + r"/networkInterfaces/(?P<name>[^/]+)")
def get_nic(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := scope_missing(ctx, sub, group):
        return missing
    found = models.nic(ctx.state, sub, group, name)
    if found is None:
        return not_found("Microsoft.Network/networkInterfaces", name, group)
    return json_response(200, responses.nic_json(found))


@route("DELETE", "nic_delete", GROUP + NETWORK + r"/networkInterfaces/(?P<name>[^/]+)")
def delete_nic(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    found = models.nic(ctx.state, sub, group, name)
    if found is None:
        return Response(204)
    if found.virtual_machine:
        return arm_error(
            400,
            "NicInUse",
            f"Network Interface {found.id} is used by existing resource "
            f"{found.virtual_machine}. In order to delete the network interface, it must be "
            "dissociated from the resource.",
        )
    return _deleting(ctx, req, sub, found.location, lambda: models.remove_nic(ctx.state, found))


@route("GET", "public_ip_get", GROUP + NETWORK + r"/publicIPAddresses/(?P<name>[^/]+)")
def get_public_ip(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    if missing := scope_missing(ctx, sub, group):
        return missing
    found = models.public_ip(ctx.state, sub, group, name)
    if found is None:
        return not_found("Microsoft.Network/publicIPAddresses", name, group)
    return json_response(200, responses.public_ip_json(found))


@route("DELETE", "public_ip_delete", GROUP + NETWORK + r"/publicIPAddresses/(?P<name>[^/]+)")
def delete_public_ip(ctx: Context, req: Request, sub: str, group: str, name: str) -> Response:
    found = models.public_ip(ctx.state, sub, group, name)
    if found is None:
        return Response(204)
    if found.ip_configuration:
        return arm_error(
            400,
            "PublicIPAddressInUse",
            f"Public IP address {found.id} can not be deleted since it is still allocated to "
            f"resource {found.ip_configuration}.",
        )
    return _deleting(
        ctx, req, sub, found.location, lambda: models.remove_public_ip(ctx.state, found)
    )


@route(
    "GET",
    "network_operation",
    SUB + NETWORK + r"/locations/(?P<location>[^/]+)/(?P<kind>operations|operationResults)"
    r"/(?P<op>[^/]+)",
)
def poll_network_operation(
    ctx: Context, req: Request, sub: str, location: str, kind: str, op: str
) -> Response:
    operation = operations.poll(ctx.state, op)
    if operation is None:
        return arm_error(404, "NotFound", f"The operation '{op}' was not found.")
    if kind.casefold() == "operationresults":
        # The Location URL: 202 while running, then 204 (a delete has no final body).
        if operation.status == "InProgress":
            return Response(202, b"", {"Location": f"{req.base_url}{req.path}", "Retry-After": "0"})
        return Response(204)
    return json_response(200, async_operation(operation))


def _deleting(
    ctx: Context, req: Request, sub: str, location: str, remove: Callable[[], None]
) -> Response:
    """A delete, as a long-running operation that removes the resource when it succeeds."""

    def finish() -> None:
        with ctx.state.lock:
            remove()

    failure = ctx.faults.take_operation_failure(req.path)
    return _accepted(req, sub, operations.begin(ctx.state, location, finish, failure))


def _accepted(req: Request, sub: str, op: Operation) -> Response:
    """202 as Microsoft.Network sends it for a delete: Azure-AsyncOperation and Location."""
    api = req.query.get("api-version", "")
    base = f"{req.base_url}/subscriptions/{sub}{NETWORK}/locations/{op.location}"
    return accepted(
        {
            "Azure-AsyncOperation": f"{base}/operations/{op.id}?api-version={api}",
            "Location": f"{base}/operationResults/{op.id}?api-version={api}",
        }
    )
