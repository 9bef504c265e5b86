"""Each warning is said once, where its reader sees it, and none a cloud makes inevitable:
`az group list` prints no creation time for any group."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

from audit_helpers import CLOUDGUARD, SUBSCRIPTION, azure_vm, run_audit_cli, write_json
from named_checks import broken

GROUP = {
    "id": f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-ci",
    "name": "rg-ci",
    "type": "Microsoft.Resources/resourceGroups",
    "location": "westeurope",
    "tags": {"task-id": "t-1"},
    "managedBy": None,
    "properties": {"provisioningState": "Succeeded"},
}  # as `az group list -o json` prints a group: no creation time


def test_a_group_without_a_creation_time_is_no_warning_and_a_vm_without_one_is(
    tmp_path: Path,
) -> None:
    groups = write_json(tmp_path / "groups.json", [GROUP])
    report = json.loads(run_audit_cli("-i", str(groups), "-f", "json").stdout)
    assert not [w for w in report["warnings"] if "creation time" in w], broken(
        "no-warning-for-a-group-without-a-time", f"a group warned: {report['warnings']}"
    )
    assert report["findings"][0]["age_seconds"] is None  # judged without an age

    vm = azure_vm("vm-1", tags={"task-id": "t-1"})
    del vm["timeCreated"]
    vms = write_json(tmp_path / "vms.json", [vm])
    report = json.loads(run_audit_cli("-i", str(vms), "-f", "json").stdout)
    assert [w for w in report["warnings"] if "with no creation time" in w], report["warnings"]


def test_a_table_on_a_terminal_says_each_warning_once(tmp_path: Path) -> None:
    vm = azure_vm("vm-1", tags={"task-id": "t-1"})
    del vm["timeCreated"]
    export = write_json(tmp_path / "vms.json", [vm])
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [str(CLOUDGUARD), "audit", "-i", str(export), "--no-history"],
        stdout=follower,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        text=True,
    ) as child:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the child
                break
            if not chunk:
                break
            shown += chunk
        stderr = child.stderr.read() if child.stderr else ""
    os.close(leader)
    said = shown.decode() + stderr
    assert said.count("with no creation time") == 1, broken(
        "each-warning-once", f"a warning said {said.count('with no creation time')} times: {said}"
    )

    piped = subprocess.run(
        [str(CLOUDGUARD), "audit", "-i", str(export), "--no-history", "-f", "json"],
        capture_output=True,
        cwd=tmp_path,
        text=True,
        check=False,
    )
    assert piped.stderr.count("with no creation time") == 1, piped.stderr  # stderr still says it
