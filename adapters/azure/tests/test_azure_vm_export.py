"""`az vm list -d -o json` entries: the one-pass reader (`export._vm`) is the checked one.

The reader of a 100,000-VM export takes each field in one pass and makes the record in C;
anything it does not expect (a field that is not text or null, a hardware profile that is
not an object, an empty id) is read by `_vm_checked`, field by field, which names the
first field that is wrong. These tests hold the two equal over entries that differ in
every field, and hold what each wrong field is called.
"""

from __future__ import annotations

from typing import Any

import pytest
from cloudguard_azure import export

from cloudguard.cloud.exports import InventoryFormatError

SUB = "5eb5c0de-0000-4000-8000-000000000000"
ARM_ID = (
    f"/subscriptions/{SUB}/resourceGroups/RG-CI/providers/Microsoft.Compute/virtualMachines/vm-1"
)
HOSTILE = 'quote " backslash \\ escape \x1b[2J newline \n bidi \u202e ünïcödé 🚀'


def _entry(**changed: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": ARM_ID,
        "name": "vm-1",
        "resourceGroup": "rg-ci",
        "location": "eastus",
        "hardwareProfile": {"vmSize": "Standard_D4as_v6"},
        "powerState": "VM running",
        "timeCreated": "2026-12-01T10:00:00.1234567+00:00",
        "tags": {"task-id": "task-1", "owner": "fleet"},
        "vmId": "00000001-2222-3333-4444-555555555555",
    }
    return {**entry, **changed}


def _without(*fields: str) -> dict[str, Any]:
    return {key: value for key, value in _entry().items() if key not in fields}


ENTRIES = [
    _entry(),
    _without("resourceGroup", "location", "name", "powerState", "timeCreated", "vmId", "tags"),
    _without("hardwareProfile"),
    _entry(hardwareProfile={}),
    _entry(hardwareProfile={"vmSize": None}),
    _entry(
        resourceGroup=None,
        location=None,
        name=None,
        powerState=None,
        timeCreated=None,
        vmId=None,
        tags=None,
    ),
    _entry(resourceGroup="", location="", name="", powerState="", timeCreated="", vmId=""),
    _entry(powerState="  VM Deallocated "),
    _entry(powerState="VM hibernated"),  # not a state az prints: unknown
    _entry(timeCreated="yesterday"),
    _entry(timeCreated="2026-12-01T10:00:00"),  # no offset: UTC
    _entry(timeCreated="2026-12-01T12:00:00+02:00"),
    _entry(id="/not/an/arm/id/vm-2"),  # no subscription, no group: from nowhere
    _entry(id="/subscriptions/s/resourceGroups/g/x", resourceGroup=None),  # the group: the id's
    _entry(name=HOSTILE, resourceGroup=HOSTILE, tags={HOSTILE: HOSTILE, "n": 1, "none": None}),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=range(len(ENTRIES)))
def test_the_one_pass_reader_reads_each_vm_as_the_checked_one(entry: dict[str, Any]) -> None:
    fast, checked = export._vm(entry, "az.json"), export._vm_checked(entry, "az.json")
    assert fast == checked
    assert type(fast) is type(checked)


class _Text(str):
    """Text, though not of the type JSON decodes: the checked reader takes it as text."""


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"id": "  "}, "id: empty"),
        ({"resourceGroup": 7}, "resourceGroup: expected text, got a number"),
        ({"location": ["eastus"]}, "location: expected text, got a list"),
        ({"name": True}, "name: expected text, got true/false"),
        ({"powerState": {}}, "powerState: expected text, got an object"),
        ({"timeCreated": 1.5}, "timeCreated: expected text, got a number"),
        ({"vmId": 1}, "vmId: expected text, got a number"),
        ({"hardwareProfile": "big"}, "hardwareProfile: expected an object, got text"),
        ({"hardwareProfile": {"vmSize": 4}}, "vmSize: expected text, got a number"),
        # Two wrong: the first the checked reader reads is named.
        ({"location": 1, "resourceGroup": 2}, "resourceGroup: expected text"),
        ({"tags": [], "vmId": 1}, "tags: expected an object of name: value, got a list"),
        ({"tags": []}, "tags: expected an object of name: value, got a list"),
    ],
)
def test_a_wrong_field_is_named_as_the_checked_reader_names_it(
    changed: dict[str, Any], named: str
) -> None:
    with pytest.raises(InventoryFormatError) as fast:
        export.vm_from_cli(_entry(**changed), "az.json")
    with pytest.raises(InventoryFormatError) as checked:
        export._vm_checked(_entry(**changed), "az.json")
    assert named in str(fast.value)
    assert str(fast.value).endswith(str(checked.value))


def test_text_of_another_type_is_read_by_the_checked_reader_as_text() -> None:
    entry = _entry(location=_Text("eastus"), hardwareProfile={"vmSize": _Text("B2s")})
    assert export._vm(entry, "az.json") == export._vm_checked(entry, "az.json")
