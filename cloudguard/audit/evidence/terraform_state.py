"""Terraform state as evidence: a resource whose cloud id is in state is owned.

Two shapes, both as Terraform writes them, told apart by their top-level keys:

- a state file (`terraform.tfstate`, `terraform state pull`), format version 4:
  `resources[].instances[].attributes.id`, each resource with a `mode`;
- `terraform show -json` output: `values.root_module.resources[].values.id`,
  recursively through `child_modules[]` (a module may hold only child modules).

Only managed resources count: a `data` source reads something Terraform does
not own. Only the `id` attribute is read, so nothing else in state (sensitive
attributes included) can reach the report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cloudguard.audit.evidence.interface import (
    EvidenceError,
    EvidenceRequest,
    EvidenceSource,
    Factory,
    NotSupplied,
    OwnedIdFiles,
    cloud_id_key,
)
from cloudguard.cloud.options import EVIDENCE_PANEL, Shown, declare, string

STATE_VERSION = 4

STATE = declare(
    "terraform_state",
    parse=string,
    default=(),
    metavar="FILE",
    help="Terraform state (.tfstate, version 4) or `terraform show -json` output: "
    "a resource whose cloud id is in it is owned (repeatable).",
    apply=Shown("Terraform state: a resource whose id is in it is owned (repeatable).", "FILE"),
    many=True,
    path=True,
    panel=EVIDENCE_PANEL,
    locates=True,
)


def read_terraform_state(path: str | Path) -> frozenset[str]:
    """Cloud ids (as `cloud_id_key` gives them) of the managed resources in `path`."""
    source = f"terraform state {path}"
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError(source, f"cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise EvidenceError(source, f"not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise EvidenceError(source, "not a Terraform state: not a JSON object")
    try:
        if "format_version" in document:
            ids = list(_show_json_ids(document))
        elif "version" in document:
            ids = list(_state_file_ids(document))
        else:
            raise _Shape('neither a state file ("version") nor `terraform show -json` output')
    except _Shape as exc:
        raise EvidenceError(source, f"not a Terraform state: {exc}") from None
    return frozenset(cloud_id_key(i) for i in ids)


class _Shape(Exception):
    """The document is not in the shape Terraform writes (says where)."""


def _state_file_ids(document: dict[str, Any]) -> Iterator[str]:
    if document["version"] != STATE_VERSION:
        raise _Shape(f"state format version {document['version']!r} (only {STATE_VERSION} is read)")
    for r, resource in enumerate(_list(document, "resources", "resources")):
        where = f"resources[{r}]"
        if not isinstance(resource, dict):
            raise _Shape(f"{where} is not an object")
        if resource.get("mode") != "managed":
            continue
        for i, instance in enumerate(_list(resource, "instances", f"{where}.instances")):
            if not isinstance(instance, dict) or not isinstance(instance.get("attributes"), dict):
                raise _Shape(f"{where}.instances[{i}] has no attributes object")
            yield from _id(instance["attributes"])


def _show_json_ids(document: dict[str, Any]) -> Iterator[str]:
    values = document.get("values")
    if values is None:
        return  # `terraform show -json` of an empty state: {"format_version": "1.0"}
    if not isinstance(values, dict) or not isinstance(values.get("root_module"), dict):
        raise _Shape("values.root_module is not an object")
    yield from _module_ids(values["root_module"], "values.root_module")


def _module_ids(module: dict[str, Any], where: str) -> Iterator[str]:
    for r, resource in enumerate(_list(module, "resources", f"{where}.resources", optional=True)):
        if not isinstance(resource, dict) or not isinstance(resource.get("values"), dict):
            raise _Shape(f"{where}.resources[{r}] has no values object")
        if resource.get("mode") == "managed":
            yield from _id(resource["values"])
    children = _list(module, "child_modules", f"{where}.child_modules", optional=True)
    for c, child in enumerate(children):
        if not isinstance(child, dict):
            raise _Shape(f"{where}.child_modules[{c}] is not an object")
        yield from _module_ids(child, f"{where}.child_modules[{c}]")


def _list(container: dict[str, Any], key: str, where: str, optional: bool = False) -> list[Any]:
    value = container.get(key)
    if value is None and (optional or key not in container):
        # A state with no resources may omit the list or write null.
        return []
    if not isinstance(value, list):
        raise _Shape(f"{where} is not a list")
    return value


def _id(attributes: dict[str, Any]) -> Iterator[str]:
    # Any resource with a string id: VMs and disks (azurerm_*_virtual_machine,
    # azurerm_managed_disk, aws_instance, aws_ebs_volume) and whatever else
    # the inventory may one day list.
    cloud_id = attributes.get("id")
    if isinstance(cloud_id, str) and cloud_id.strip():
        yield cloud_id


def _build(request: EvidenceRequest) -> EvidenceSource | NotSupplied:
    paths = request.value(STATE)
    if not paths:
        return NotSupplied("no --terraform-state")
    return OwnedIdFiles("terraform-state", "terraform state", read_terraform_state, tuple(paths))


FACTORY = Factory(_build, options=(STATE,))
