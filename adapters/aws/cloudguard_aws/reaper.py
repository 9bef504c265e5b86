"""The AWS side of `cloudguard reap apply`: read one instance or volume live, act on it.

Reads by id (`DescribeInstances(InstanceIds=[id])`, `DescribeVolumes(
VolumeIds=[id])`), which return tags with the resource; instances are
normalised by the same code as the sweep and `aws ec2 describe-instances`
files. Acts with `StopInstances`, `TerminateInstances`, `DeleteVolume`; an
accepted request is "done" (EC2 then stops or terminates on its own). The
session and client options are the sweep's (`--credential PROFILE`,
`--management-endpoint`, `--ca-bundle`). boto3 is imported inside functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cloudguard.audit.inventory_files import parse_inventory
from cloudguard.audit.model import Resource, SweepRequest
from cloudguard.reap.model import ActionError, PlanItem, ReadError, ReaperUnavailable
from cloudguard_aws.adapter import (
    CREDENTIAL_CHAIN,
    default_session,
    describe_error,
    jsonable,
    make_client,
    volume_resource,
)

# Error codes meaning "no such resource" (as opposed to "cannot tell").
_NOT_FOUND = {"InvalidInstanceID.NotFound", "InvalidVolume.NotFound"}


class AwsReaper:
    def __init__(
        self, request: SweepRequest, session_factory: Callable[[SweepRequest], Any] | None = None
    ) -> None:
        self._request = request
        self._session = (session_factory or default_session)(request)
        self._clients: dict[str, Any] = {}
        if self._session.get_credentials() is None:
            raise ReaperUnavailable(
                "aws credentials", f"no AWS credentials found; tried: {CREDENTIAL_CHAIN}"
            )

    def current(self, item: PlanItem) -> Resource | None:
        from botocore.exceptions import BotoCoreError, ClientError

        ec2 = self._ec2(item.region)
        try:
            if item.kind == "vm":
                answer = ec2.describe_instances(InstanceIds=[item.id])
                found = parse_inventory(
                    {"Reservations": jsonable(answer.get("Reservations", []))},
                    source=f"aws:{item.region}",
                )
            else:
                answer = ec2.describe_volumes(VolumeIds=[item.id])
                found = tuple(
                    volume_resource(v, item.region, item.account) for v in answer.get("Volumes", [])
                )
        except ClientError as error:
            if _code(error) in _NOT_FOUND:
                return None
            raise ReadError(f"aws {item.kind} {item.id}", describe_error(error)) from error
        except BotoCoreError as error:
            raise ReadError(f"aws {item.kind} {item.id}", describe_error(error)) from error
        return next((r for r in found if r.id == item.id), None)

    def act(self, item: PlanItem, action: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        ec2 = self._ec2(item.region)
        source = f"aws {item.kind} {item.id}"
        try:
            if item.kind == "vm" and action == "stop":
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

    def _ec2(self, region: str) -> Any:
        if region not in self._clients:
            self._clients[region] = make_client(self._session, self._request, "ec2", region)
        return self._clients[region]


def _code(error: Exception) -> str:
    response = getattr(error, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""
