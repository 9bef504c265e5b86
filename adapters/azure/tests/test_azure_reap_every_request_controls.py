"""Negative control for the order of the Azure reaper's reads of a VM or disk (issue 32):
what protects it first, its own GET last. Read its GET first again (as it was) in a copy of
the adapter, and the every-request attack must find the action sent after a protection tag
(harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import pytest
from cloudguard_mutants import AZURE_SDKS, Mutation, assert_turns_red

AZURE = Path(cloudguard_azure.__file__).resolve().parent
ATTACK = (
    "adapters/azure/tests/test_azure_reap_every_request.py::"
    "test_a_vm_protected_before_any_request_is_never_acted_on"
)

MUTATIONS = [
    Mutation(
        name="a VM's own GET before what protects it",
        module="reaper.py",
        original="        try:\n            vm, resource, attached, left, disks = read()\n",
        broken="        try:\n            vm, resource, attached, left, disks = first\n",
        also=(
            (
                "reaper.py",
                "        unreadable, protections, _ = self._before_its_own_read(\n",
                "        def read() -> tuple[Any, Any, Any, Any, Any]:\n"
                '            if item.kind == "vm":\n'
                "                vm = compute.virtual_machines.get(group, name, "
                'expand="instanceView")\n'
                "                return vm, normalise.vm_resource(vm, sub), None, _left_by(vm), "
                "_kept_disks(vm)\n"
                "            disk = compute.disks.get(group, name)\n"
                "            attached = None if normalise.is_unattached(disk) else "
                "_attachment(disk)\n"
                "            return disk, normalise.disk_resource(disk, sub), attached, (), ()\n"
                "\n"
                "        first = read()\n"
                "        unreadable, protections, _ = self._before_its_own_read(\n",
            ),
        ),
        tests=(f"{ATTACK}[deallocate]",),
        check="never-acted-on-after-a-change",
        package=AZURE,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_reading_the_vm_before_its_protection_turns_the_attack_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AZURE_SDKS)
