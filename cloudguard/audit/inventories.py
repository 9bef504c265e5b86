"""Where an audit's resources come from: anything that reads into a `SweepResult`.

Two kinds: an export file (`inventory_files.InventoryFile`) and a live sweep
of one cloud (`LiveSweep`). Whatever goes wrong reading one is a
`SourceFailure` in its result, never an exception and never an empty result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from cloudguard.cloud.cloud import Cloud
from cloudguard.cloud.records import SweepRequest, SweepResult


class Inventory(Protocol):
    """Anything that yields resources: an inventory file, a live adapter sweep."""

    def read(self) -> SweepResult: ...


@dataclass(frozen=True)
class LiveSweep:
    """One cloud's sweep as an `Inventory` (the cloud's error policy makes it fail closed)."""

    cloud: Cloud
    request: SweepRequest

    def read(self) -> SweepResult:
        return self.cloud.sweep(self.request)
