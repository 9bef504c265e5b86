"""The AWS side of `cloudguard reap apply`: read one instance or volume live, act on it.

Reads by id (`DescribeInstances(InstanceIds=[id])`, `DescribeVolumes(
VolumeIds=[id])`), which return tags with the resource; instances are
normalised by the same code as the sweep and `aws ec2 describe-instances`
files. An instance's termination and stop protection
(`DescribeInstanceAttribute` disableApiTermination / disableApiStop) is read
with it and honoured as protection; a volume's attachments say whether it is
in use. The credentials must be the item's account's (STS
GetCallerIdentity, once): an item of another account is unreadable, never
acted on in the wrong one. Acts with `StopInstances`, `TerminateInstances`,
`DeleteVolume`, through a client whose retries are off: a request whose
answer was lost is reported failed, never sent again. An accepted request is
"done" (EC2 then stops or terminates on its own). The session and client
options are the sweep's (`--credential PROFILE`, `--management-endpoint`,
`--ca-bundle`). boto3 is imported inside functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cloudguard.cloud.endpoints import EndpointRefused
from cloudguard.cloud.reaping import ActionError, Live, ReadError, ReaperUnavailable, Target
from cloudguard.cloud.records import SweepRequest
from cloudguard_aws import reap_kinds
from cloudguard_aws.export import instances_of, jsonable, volume_resource
from cloudguard_aws.session import (
    BOTOCORE_TIMEOUT,
    ItemBudget,
    describe_error,
    make_client,
    missing_credentials,
    open_session,
)

# Error codes meaning "no such resource" (as opposed to "cannot tell").
_NOT_FOUND = {"InvalidInstanceID.NotFound", "InvalidVolume.NotFound", *reap_kinds.NOT_FOUND}
_IDS = {
    "vm": re.compile(r"^i-[0-9a-f]{8,17}$"),
    "disk": re.compile(r"^vol-[0-9a-f]{8,17}$"),
    **reap_kinds.IDS,
}
_PROTECTION = {
    "disableApiTermination": "EC2 termination protection (DisableApiTermination) is on",
    "disableApiStop": "EC2 stop protection (DisableApiStop) is on",
}


class AwsReaper:
    def __init__(
        self, request: SweepRequest, session_factory: Callable[[SweepRequest], Any] | None = None
    ) -> None:
        self._request = request
        try:
            self._session = open_session(request, session_factory)
        except EndpointRefused as wrong_endpoint:
            raise ReaperUnavailable("aws credentials", str(wrong_endpoint)) from None
        self._clients: dict[tuple[str, str, bool], Any] = {}
        if refused := missing_credentials(self._session):
            raise ReaperUnavailable("aws credentials", refused)
        self._account: str | None = None
        # `--item-budget`: each item's reads, retries and backoff included, end by then.
        budget = request.item_budget.total_seconds() if request.item_budget else None
        self._budget = ItemBudget(budget)

    def current(self, item: Target) -> Live | None:
        from botocore.exceptions import BotoCoreError, ClientError

        source = f"aws {item.kind} {item.id}"
        _check_address(item, ReadError)
        self._budget.start()
        try:
            self._check_account(item)
            if item.kind in reap_kinds.IDS:
                return reap_kinds.read(
                    item.kind,
                    lambda service: self._client(service, item.region),
                    item.id,
                    item.region,
                    item.account,
                )
            ec2 = self._ec2(item.region)
            if item.kind == "vm":
                # Its protection first, its tags last: a tag changed after the last read is
                # the only window left (a protection set after its read EC2 enforces).
                protections = self._instance_protection(ec2, item.id)
                answer = ec2.describe_instances(InstanceIds=[item.id])
                found = instances_of(
                    {"Reservations": jsonable(answer.get("Reservations", []))},
                    f"aws:{item.region}",
                )
                resource = next((r for r in found if r.id == item.id), None)
                if resource is None:
                    return None
                raw = answer["Reservations"][0]["Instances"][0]
                return Live(
                    resource,
                    protections=protections,
                    left_billing=_kept_volumes(raw),
                    dependent_disks=tuple(
                        m["Ebs"]["VolumeId"]
                        for m in raw.get("BlockDeviceMappings") or ()
                        if "VolumeId" in m.get("Ebs", {})
                        and not m["Ebs"].get("DeleteOnTermination", False)
                    ),
                )
            volumes = ec2.describe_volumes(VolumeIds=[item.id]).get("Volumes", [])
            volume = next((v for v in volumes if v.get("VolumeId") == item.id), None)
            if volume is None:
                return None
            attached = [a.get("InstanceId", "?") for a in volume.get("Attachments") or ()]
            in_use = attached or volume.get("State") not in ("available", None)
            return Live(
                volume_resource(volume, item.region, item.account),
                attached_to=(", ".join(attached) or f"state {volume.get('State')}")
                if in_use
                else None,
            )
        except ClientError as error:
            if _code(error) in _NOT_FOUND:
                return None
            raise ReadError(source, describe_error(error)) from error
        except BotoCoreError as error:
            raise ReadError(source, describe_error(error)) from error

    def _instance_protection(self, ec2: Any, instance: str) -> tuple[str, ...]:
        found: list[str] = []
        for attribute, meaning in _PROTECTION.items():
            answer = ec2.describe_instance_attribute(InstanceId=instance, Attribute=attribute)
            key = attribute[0].upper() + attribute[1:]
            if answer.get(key, {}).get("Value"):
                found.append(meaning)
        return tuple(found)

    def _check_account(self, item: Target) -> None:
        if self._account is None:
            sts = self._budget.bind(
                make_client(self._session, self._request, "sts", item.region, self._budget.seconds)
            )
            self._account = str(sts.get_caller_identity()["Account"])
        if item.account != self._account:
            raise ReadError(
                f"aws {item.kind} {item.id}",
                f"the item is in account {item.account!r}, the credentials are for "
                f"{self._account}: not acted on in another account",
            )

    def act(self, item: Target, action: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        _check_address(item, ActionError)
        ec2 = self._ec2(item.region, acting=True)
        source = f"aws {item.kind} {item.id}"
        try:
            if item.kind in reap_kinds.IDS and action == "delete":
                reap_kinds.delete(
                    item.kind, lambda service: self._client(service, item.region, True), item.id
                )
            elif item.kind == "vm" and action == "stop":
                ec2.stop_instances(InstanceIds=[item.id])
            elif item.kind == "vm" and action == "terminate":
                ec2.terminate_instances(InstanceIds=[item.id])
            elif item.kind == "disk" and action == "delete":
                ec2.delete_volume(VolumeId=item.id)
            else:
                raise ActionError(source, f"no action {action!r} for a {item.kind}")
        except (ClientError, BotoCoreError) as error:
            raise ActionError(source, f"{action} failed: {describe_error(error)}") from error

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def _ec2(self, region: str, *, acting: bool = False) -> Any:
        return self._client("ec2", region, acting)

    def _client(self, service: str, region: str, acting: bool = False) -> Any:
        key = (service, region, acting)
        if key not in self._clients:
            timeout = self._budget.seconds
            if not acting:
                client = self._budget.bind(
                    make_client(self._session, self._request, service, region, timeout)
                )
            else:
                from botocore.config import Config

                # One attempt: botocore would re-send a Stop/Terminate/Delete whose answer
                # was lost (5xx, connection reset); ours is logged failed instead. Its
                # timeouts no longer than the item's budget.
                timeouts = (
                    {"connect_timeout": timeout, "read_timeout": timeout}
                    if timeout is not None and timeout < BOTOCORE_TIMEOUT
                    else {}
                )
                client = self._session.client(
                    service,
                    region_name=region,
                    endpoint_url=self._request.endpoint,
                    verify=self._request.ca_bundle,
                    config=Config(
                        retries={"total_max_attempts": 1, "mode": "standard"}, **timeouts
                    ),
                )
            self._clients[key] = client
        return self._clients[key]


def _code(error: Exception) -> str:
    response = getattr(error, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _check_address(item: Target, error: type[ReadError] | type[ActionError]) -> None:
    source = f"aws {item.kind} {item.id}"
    if not item.account.strip():
        raise error(source, "the item names no AWS account")
    pattern = _IDS.get(item.kind)
    if pattern is None or not pattern.match(item.id) or item.region in ("", ".", ".."):
        raise error(source, f"not an EC2 {item.kind} id in a region")


def _kept_volumes(instance: dict[str, Any]) -> tuple[str, ...]:
    """Volumes that outlive a terminate (DeleteOnTermination false): they go on billing."""
    return tuple(
        f"EBS volume {m['Ebs'].get('VolumeId', '?')} ({m.get('DeviceName', '?')})"
        for m in instance.get("BlockDeviceMappings") or ()
        if "Ebs" in m and not m["Ebs"].get("DeleteOnTermination", False)
    )
