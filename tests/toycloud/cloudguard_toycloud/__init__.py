"""Toy cloud: a third cloudguard adapter, defined only in the test suite.

Its "cloud" is a JSON file (`--management-endpoint PATH`): `{"machines":
[...]}`, each machine `{"handle", "tenant", "zone", "shape", "state",
"labels", "born"}`. Its CLI's export is the same document under a
`"toycloud"` key. It sweeps, parses its export, prices (its own list
prices), and reaps (`pause` / `scrap`, verbs no other cloud uses) through
the `CloudAdapter` protocol alone: the core names no cloud, so none of this
needed a core edit. Label names compare case-insensitively, as Azure's do,
and handles are never reused, as EC2's are. It has an option of its own,
`--toy-zone` (`toy-zone` in cloudguard.toml): the core learns it from
`options` and hands its value back in `SweepRequest.settings`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cloudguard.cloud.exports import InventoryFormatError
from cloudguard.cloud.kinds import Billing
from cloudguard.cloud.options import LIVE_PANEL, declare, string
from cloudguard.cloud.pricing import PriceList, PriceQuery
from cloudguard.cloud.reaping import (
    DESTRUCTIVE,
    REVERSIBLE,
    ActionError,
    Live,
    ReadError,
    Target,
)
from cloudguard.cloud.records import Resource, SourceFailure, SweepRequest, SweepResult

_POWER = {"on": "running", "booting": "starting", "paused": "stopped", "scrapped": "terminated"}
_VERBS = {REVERSIBLE: "pause", DESTRUCTIVE: "scrap"}

ZONE = declare(
    "toy_zone",
    parse=string,
    default=None,
    metavar="ZONE",
    help="Toy cloud: sweep only the machines of this zone (default: every zone).",
    panel=LIVE_PANEL,
)


def machine_resource(machine: Mapping[str, Any], source: str) -> Resource:
    if not isinstance(machine, dict) or not isinstance(machine.get("handle"), str):
        raise InventoryFormatError("a toy machine has no string handle")
    born = machine.get("born")
    return Resource(
        provider="toy",
        account=str(machine.get("tenant") or ""),
        region=str(machine.get("zone") or ""),
        group="",
        id=machine["handle"],
        name=str(machine.get("name") or machine["handle"]),
        kind="vm",
        size=str(machine.get("shape") or ""),
        power_state=_POWER.get(str(machine.get("state")), "unknown"),
        created=datetime.fromisoformat(born) if isinstance(born, str) else None,
        tags={str(k): str(v) for k, v in (machine.get("labels") or {}).items()},
        source=source,
    )


class ToyExport:
    """`toyctl machines --json`: `{"toycloud": {"machines": [...]}}`."""

    description = '`toyctl machines --json` (an object with "toycloud")'
    entry_description = "a toy machine (never a list entry)"

    def claims_entry(self, entry: Any) -> bool:
        return False

    def parse_entry(self, entry: Any, source: str) -> Iterator[Resource]:
        raise InventoryFormatError("toyctl prints an object, not a list")

    def claims_document(self, document: Any) -> bool:
        return isinstance(document, dict) and "toycloud" in document

    def parse_document(self, document: Any, source: str) -> Iterator[Resource]:
        machines = (document.get("toycloud") or {}).get("machines")
        if not isinstance(machines, list):
            raise InventoryFormatError('"toycloud" has no list of machines')
        for machine in machines:
            yield machine_resource(machine, source)


class ToyAdapter:
    name = "toy"
    credential_names: tuple[str, ...] | None = None  # a file needs none
    options = (ZONE,)
    export_parsers = (ToyExport(),)
    billable_power_states = frozenset({"running", "starting"})
    power_notes: Mapping[str, str] = MappingProxyType({"starting": "booting: the toy cloud bills"})
    hourly_prices: Mapping[str, float] = MappingProxyType({"Small": 0.25, "Large": 1.5})
    # Machines only: a VM bills by its power state; the toy cloud has no other kind.
    kind_billing: Mapping[str, Billing] = MappingProxyType({})
    reap_actions: Mapping[str, Mapping[str, str]] = MappingProxyType({"vm": _VERBS})
    any_kind_actions: Mapping[str, str] = MappingProxyType({})
    ids_never_reused = True
    case_insensitive_names = True

    def price_query(self, resource: Resource) -> PriceQuery | None:
        return None  # no price list: its list prices are `hourly_prices`

    def price_list(self, request: SweepRequest) -> PriceList | None:
        return None

    def delete_command(self, resource: Resource) -> str | None:
        return None  # every kind it has, it reaps

    def price_key(self, size: str) -> str:
        return size.casefold()

    def scope_of(self, resource: Resource) -> str:
        return f"{resource.account}@{resource.region}"

    def check_options(self, values: Mapping[str, Any]) -> None:
        pass  # --toy-zone takes any zone name

    def sweep(self, request: SweepRequest) -> SweepResult:
        try:
            world = _world(request)
        except (OSError, ValueError) as exc:
            return SweepResult((), (SourceFailure("toy cloud", f"cannot read: {exc}"),))
        zone = ZONE.value_in(request.settings)
        return SweepResult(
            tuple(
                machine_resource(m, "toy")
                for m in world["machines"]
                if zone is None or m.get("zone") == zone
            )
        )

    def reaper(self, request: SweepRequest) -> ToyReaper:
        return ToyReaper(request)


class ToyReaper:
    def __init__(self, request: SweepRequest) -> None:
        self._request = request

    def current(self, item: Target) -> Live | None:
        try:
            world = _world(self._request)
        except (OSError, ValueError) as exc:
            raise ReadError(f"toy {item.id}", str(exc)) from exc
        machine = next((m for m in world["machines"] if m["handle"] == item.id), None)
        return None if machine is None else Live(machine_resource(machine, "toy"))

    def act(self, item: Target, action: str) -> None:
        world = _world(self._request)
        machine = next((m for m in world["machines"] if m["handle"] == item.id), None)
        if machine is None or action not in _VERBS.values():
            raise ActionError(f"toy {item.id}", f"cannot {action}")
        machine["state"] = "paused" if action == "pause" else "scrapped"
        world.setdefault("actions", []).append([action, item.id])
        Path(str(self._request.endpoint)).write_text(json.dumps(world))

    def close(self) -> None:
        pass


def _world(request: SweepRequest) -> dict[str, Any]:
    if not request.endpoint:
        raise ValueError("the toy cloud is a file: pass --management-endpoint PATH")
    world: dict[str, Any] = json.loads(Path(request.endpoint).read_text())
    return world
