"""Live inventories: adapters registered under the `cloudguard.adapters` entry-point group.

The core never imports a cloud SDK; an adapter distribution (cloudguard-azure,
cloudguard-aws) registers a class that is instantiated with no arguments and
answers `.sweep(SweepRequest) -> SweepResult`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from cloudguard.audit.adapter_registry import ENTRY_POINT_GROUP
from cloudguard.audit.model import Adapter, SourceFailure, SweepRequest, SweepResult

# The distributions that provide the adapters cloudguard knows of.
ADAPTER_DISTRIBUTIONS = {"azure": "cloudguard-azure", "aws": "cloudguard-aws"}


class UnknownProviderError(LookupError):
    def __init__(self, name: str, installed: list[str]) -> None:
        shown = ", ".join(installed) if installed else "none installed"
        distribution = ADAPTER_DISTRIBUTIONS.get(name)
        install = (
            f"; install it with `pip install 'cloudguard-ci[{name}]'` (the {distribution} "
            "distribution)"
            if distribution
            else f"; known adapters: {', '.join(sorted(ADAPTER_DISTRIBUTIONS))}"
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
