"""Live inventories: adapters registered under the `cloudguard.adapters` entry-point group.

The core never imports a cloud SDK; an adapter distribution (one per cloud)
registers a class that is instantiated with no arguments and
answers `.sweep(SweepRequest) -> SweepResult`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.metadata import EntryPoint, PackageNotFoundError, entry_points, requires

from cloudguard.audit.adapter_registry import ENTRY_POINT_GROUP
from cloudguard.audit.model import Adapter, SourceFailure, SweepRequest, SweepResult

CORE_DISTRIBUTION = "cloudguard-ci"
# `cloudguard-azure==0.1.0; extra == "azure"`, as the core's metadata lists it.
_EXTRA = re.compile(
    r"""^(?P<dist>cloudguard-[\w-]+)\b[^;]*;\s*extra\s*==\s*["'](?P<extra>[\w-]+)["']"""
)


def adapter_distributions() -> dict[str, str]:
    """The adapters cloudguard knows of, as the core's own extras declare them (one extra
    per adapter, named as the provider: `cloudguard-ci[azure]` -> cloudguard-azure)."""
    try:
        requirements = requires(CORE_DISTRIBUTION) or []
    except PackageNotFoundError:  # run from a source tree that is not installed
        return {}
    by_extra: dict[str, list[str]] = {}
    for requirement in requirements:
        if match := _EXTRA.match(requirement):
            by_extra.setdefault(match["extra"], []).append(match["dist"])
    return {extra: dists[0] for extra, dists in by_extra.items() if len(dists) == 1}


class UnknownProviderError(LookupError):
    def __init__(self, name: str, installed: list[str]) -> None:
        shown = ", ".join(installed) if installed else "none installed"
        known = adapter_distributions()
        distribution = known.get(name)
        install = (
            f"; install it with `pip install '{CORE_DISTRIBUTION}[{name}]'` (the "
            f"{distribution} distribution)"
            if distribution
            else f"; known adapters: {', '.join(sorted(known))}"
        )
        super().__init__(f"unknown provider {name!r} (installed: {shown}){install}")
        self.name = name
        self.installed = installed


def installed_adapters() -> dict[str, EntryPoint]:
    """Installed adapters by name. Tests replace this to register a fake adapter."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def resolve_providers(names: list[str]) -> dict[str, EntryPoint]:
    """The entry points for `names`; an unknown name is a usage error, not a skip."""
    installed = installed_adapters()
    for name in names:
        if name not in installed:
            raise UnknownProviderError(name, sorted(installed))
    return {name: installed[name] for name in dict.fromkeys(names)}


class UnknownCredentialError(ValueError):
    """A --credential name the adapter does not have: a usage error (2), before any sweep."""


def check_credential(entry_points: dict[str, EntryPoint], credential: str | None) -> None:
    """Refuse a credential name an adapter declares it does not know.

    An adapter may list the names it accepts as `credential_names`; one that
    takes free-form names (AWS profiles) does not, and is not checked here.
    """
    if credential is None:
        return
    for name, entry_point in entry_points.items():
        try:
            known = getattr(entry_point.load(), "credential_names", None)
        except Exception:  # cannot load: the sweep reports it as "did not run"
            continue
        if known is not None and credential.strip().lower() not in known:
            raise UnknownCredentialError(
                f"unknown credential {credential!r} for provider {name}; "
                f"choose one of: {', '.join(known)}"
            )


@dataclass(frozen=True)
class ProviderInventory:
    """One live sweep as an `Inventory`. Whatever goes wrong becomes a SourceFailure."""

    name: str
    entry_point: EntryPoint
    request: SweepRequest

    def read(self) -> SweepResult:
        source = f"provider {self.name}"
        try:
            adapter: Adapter = self.entry_point.load()()
        except Exception as exc:  # an adapter that cannot load did not sweep anything
            return _failed(source, f"cannot load {self.entry_point.value}: {exc!r}")
        try:
            result = adapter.sweep(self.request)
        except Exception as exc:  # fail closed: a crashed sweep is "did not run"
            return _failed(source, f"sweep failed: {exc!r}")
        if not isinstance(result, SweepResult):
            return _failed(source, f"sweep returned {type(result).__name__}, not a SweepResult")
        return result


def _failed(source: str, reason: str) -> SweepResult:
    return SweepResult(resources=(), failures=(SourceFailure(source, reason),))
