"""Negative controls for the order of the Azure reaper's reads of a NIC, a public IP and a
resource it reads by id (issue 32): what protects it and its listing first, its own GET last.
Read them once more after the GET (as the GET came first before) in a copy of the adapter,
and the every-request attack must find the DELETE sent after a protection tag; drop the
checks that bind its last GET to what was read before it (the listing again, the
resourceGuid), and it must find the DELETE sent after a re-creation (harness:
tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_azure
import pytest
from cloudguard_mutants import AZURE_SDKS, Mutation, assert_turns_red

AZURE = Path(cloudguard_azure.__file__).resolve().parent
ATTACK = (
    "adapters/azure/tests/test_azure_reap_every_request_members.py::"
    "test_a_member_protected_before_any_request_is_never_deleted"
)
CHANGED = (
    "adapters/azure/tests/test_azure_reap_every_request_members.py::"
    "test_a_member_re_created_or_attached_before_any_request_is_never_deleted"
)

MUTATIONS = [
    Mutation(
        name="a resource read by id: its protections and listing read after its GET",
        module="reaper.py",
        original=(
            "        if found is None:\n            return None\n"
            "        if unreadable is not None:\n"
        ),
        broken=(
            "        if found is None:\n            return None\n"
            "        unreadable, protections, created = self._before_its_own_read(\n"
            "            item, address.sub, address.group, source, listing=True\n"
            "        )\n"
            "        if unreadable is not None:\n"
        ),
        tests=(f"{ATTACK}[storage-account]",),
        check="a-member-is-never-deleted-after-a-change",
        package=AZURE,
    ),
    Mutation(
        name="a NIC or public IP: its protections and listing read after its GET",
        module="reaper.py",
        original=(
            "        if unreadable is not None:\n            raise unreadable\n"
            "        if bound_to_listing:\n"
        ),
        broken=(
            "        unreadable, protections, listed = self._before_its_own_read(\n"
            "            item, sub, group, source, listing=bound_to_listing\n"
            "        )\n"
            "        if unreadable is not None:\n            raise unreadable\n"
            "        if bound_to_listing:\n"
        ),
        tests=(f"{ATTACK}[public-ip]", f"{ATTACK}[nic]"),
        check="a-member-is-never-deleted-after-a-change",
        package=AZURE,
    ),
    Mutation(
        name="a resource read by id: its listing not read again after its GET",
        module="reaper.py",
        original="        self._listed_again(item, address.sub, address.group, source, created)\n",
        broken="",
        tests=(f"{CHANGED}[storage-account-re-created]",),
        check="a-member-is-never-deleted-after-a-change",
        package=AZURE,
    ),
    Mutation(
        name="a NIC or public IP: its resourceGuid before the listing not compared after",
        module="reaper.py",
        original='            if resource.uid.casefold() != (uid or "").casefold():\n',
        broken="            if False:\n",
        tests=(f"{CHANGED}[public-ip-re-created]", f"{CHANGED}[nic-re-created]"),
        check="a-member-is-never-deleted-after-a-change",
        package=AZURE,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_reading_a_member_before_its_protection_turns_the_attack_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, AZURE_SDKS)
