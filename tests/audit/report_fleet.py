"""A small fleet with one finding of every kind, for the SARIF and HTML report tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from audit_helpers import aws_instance, aws_instances, azure_vm, controller_home, write_json

OTHER_SUBSCRIPTION = "00000000-0000-0000-0000-0000000000aa"


def fleet_args(tmp_path: Path) -> list[str]:
    """Audit arguments for: 2 Azure orphans (two subscriptions), 1 suspect (fixture id
    with a record), 1 leaked VM without the task tag, 1 pending, 1 ok, 1 untagged VM,
    and an AWS orphan."""
    now = datetime.now(UTC)
    tmp_path.mkdir(parents=True, exist_ok=True)
    azure = write_json(
        tmp_path / "az.json",
        [
            azure_vm("vm-orphan-1", tags={"task-id": "t-gone-1"}),
            azure_vm(
                "vm-orphan-2",
                tags={"task-id": "t-gone-2"},
                size="Standard_D2as_v6",
                subscription=OTHER_SUBSCRIPTION,
                group="stage",
            ),
            azure_vm("vm-suspect", tags={"task-id": "cloud-noenv-c7"}),
            azure_vm("vm-leaked", tags={"ci-run": "run-42"}),
            azure_vm("vm-pending", tags={"task-id": "t-new"}, created=now - timedelta(minutes=5)),
            azure_vm("vm-ok", tags={"task-id": "t-live"}),
            azure_vm("vm-unrelated", tags={"owner": "someone"}),
        ],
    )
    aws = write_json(
        tmp_path / "ec2.json",
        aws_instances(aws_instance("i-0123456789abcdef0", tags={"task-id": "t-gone-3"})),
    )
    home = controller_home(tmp_path / "home", meta=["t-live", "cloud-noenv-c7"])
    fixtures = tmp_path / "fixture-ids.txt"
    fixtures.write_text("cloud-noenv-c7\n")
    return [
        "--inventory", str(azure), "--inventory", str(aws),
        "--controller-home", str(home), "--fixture-ids", str(fixtures),
        "--leaked-by", "ci-run=run-42",
    ]  # fmt: skip
