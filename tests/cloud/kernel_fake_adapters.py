"""Adapters for the registry's tests, each loaded through a real `EntryPoint`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cloudguard.cloud.options import LIVE_PANEL, declare, string
from cloudguard.cloud.records import SweepRequest, SweepResult

MADE: list[str] = []  # one entry per adapter instance made


class Counting:
    name = "counting"

    def __init__(self) -> None:
        MADE.append(self.name)

    def sweep(self, request: SweepRequest) -> SweepResult:
        return SweepResult(())


class SweepOnly:
    """States no rule at all: every one is the strictest."""

    name = "sweep-only"

    def sweep(self, request: SweepRequest) -> SweepResult:
        return SweepResult(())


class Unloadable:
    def __init__(self) -> None:
        raise RuntimeError("its SDK is broken")


def _option(name: str) -> Any:
    return declare(name, parse=string, default=None, metavar="X", help="x", panel=LIVE_PANEL)


class RetriesToo:
    """Declares an option the core already has."""

    name = "retries-too"
    options = (_option("retries"),)

    def check_options(self, values: Mapping[str, Any]) -> None:
        pass


class Zone:
    name = "zone-a"
    options = (_option("zone"),)


class ZoneAgain:
    name = "zone-b"
    options = (_option("zone"),)
