"""A Compute Engine machine type's vCPUs and memory, read from its name. Stdlib only.

Compute Engine bills a VM's vCPUs and its memory apart (a vCPU-hour and a GiB-hour of
its series), so a price needs the machine type's shape. It is worked out from the name,
not asked of Compute Engine's `machineTypes` API, because:

- the audit prices exports too (`gcloud compute instances list`), with no project to
  ask in, no Compute credential and no second endpoint for the endpoint rule to judge;
- a predefined type's shape is fixed by its series: N vCPUs and a set number of GiB
  per vCPU (`n2-standard-4`: 4 vCPUs, 4 x 4 = 16 GiB; `n1-highmem-8`: 8 x 6.5 GiB), as
  Compute Engine documents each series, whatever N;
- a custom type carries its shape in its name (`n2-custom-4-16384`: 4 vCPUs, 16384 MiB;
  `custom-2-7680` is N1's).

A type this module does not know has no shape, and so no price: unknown, never zero.
That is a new series, the GPU and memory-optimized ones (a2, g2, m1, ...), N1's
shared-core f1-micro and g1-small (billed per instance, not per vCPU), custom types
with extended memory (`-ext`, billed by another SKU) and a custom type's memory
outside what its series allows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """What one instance of a machine type bills: `vcpus` (a shared-core E2 bills a
    fraction of one) and `memory_gib`, at its `series`' predefined or custom rates."""

    series: str  # n2, e2, n1, ...
    vcpus: float
    memory_gib: float
    custom: bool = False


# (series, class) -> GiB of memory per vCPU, for every vCPU count of the class.
_PER_VCPU: dict[tuple[str, str], float] = {
    ("n1", "standard"): 3.75,
    ("n1", "highmem"): 6.5,
    ("n1", "highcpu"): 0.9,
    ("n2", "standard"): 4.0,
    ("n2", "highmem"): 8.0,
    ("n2", "highcpu"): 1.0,
    ("n2d", "standard"): 4.0,
    ("n2d", "highmem"): 8.0,
    ("n2d", "highcpu"): 1.0,
    ("e2", "standard"): 4.0,
    ("e2", "highmem"): 8.0,
    ("e2", "highcpu"): 1.0,
    ("c2", "standard"): 4.0,
    ("c2d", "standard"): 4.0,
    ("c2d", "highmem"): 8.0,
    ("c2d", "highcpu"): 2.0,
    ("t2d", "standard"): 4.0,
}
# E2's shared-core types bill a fraction of a vCPU at E2's rate: (vCPUs billed, GiB).
_SHARED_CORE: dict[str, tuple[float, float]] = {
    "e2-micro": (0.25, 1.0),
    "e2-small": (0.5, 2.0),
    "e2-medium": (1.0, 4.0),
}
# A custom type's series -> the most GiB per vCPU it holds without extended memory.
_CUSTOM_MOST_PER_VCPU: dict[str, float] = {"n1": 6.5, "n2": 8.0, "n2d": 8.0, "e2": 8.0}
_CUSTOM_LEAST_PER_VCPU = 0.5  # GiB: every custom series needs at least this per vCPU
_MEMORY_STEP_MIB = 256  # a custom type's memory is a multiple of 256 MiB

_SERIES, _COUNT = r"(?P<series>[a-z][a-z0-9]*)", r"(?P<vcpus>[1-9][0-9]*)"
_PREDEFINED = re.compile(rf"{_SERIES}-(?P<cls>[a-z]+)-{_COUNT}")  # n2-standard-4
_CUSTOM = re.compile(rf"(?:{_SERIES}-)?custom-{_COUNT}-(?P<mib>[1-9][0-9]*)")  # n2-custom-4-16384


def shape_of(machine_type: str) -> Shape | None:
    """`n2-standard-4` -> 4 vCPUs, 16 GiB of N2; None for a type not known here."""
    name = machine_type.strip().casefold()
    if name in _SHARED_CORE:
        vcpus, gib = _SHARED_CORE[name]
        return Shape("e2", vcpus, gib)
    custom = _CUSTOM.fullmatch(name)
    if custom is not None:
        return _custom(custom["series"] or "n1", int(custom["vcpus"]), int(custom["mib"]))
    predefined = _PREDEFINED.fullmatch(name)
    if predefined is None:
        return None
    per_vcpu = _PER_VCPU.get((predefined["series"], predefined["cls"]))
    if per_vcpu is None:
        return None
    vcpus = int(predefined["vcpus"])
    return Shape(predefined["series"], float(vcpus), vcpus * per_vcpu)


def _custom(series: str, vcpus: int, mib: int) -> Shape | None:
    most = _CUSTOM_MOST_PER_VCPU.get(series)
    gib = mib / 1024
    if (
        most is None
        or mib % _MEMORY_STEP_MIB
        or not vcpus * _CUSTOM_LEAST_PER_VCPU <= gib <= vcpus * most
    ):
        return None  # not a custom type its series has (or one with extended memory)
    return Shape(series, float(vcpus), gib, custom=True)
