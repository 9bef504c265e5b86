"""The installed clouds: adapters registered under the `cloudguard.adapters` entry-point group.

One registry (`Clouds`) loads each adapter once, the first time its provider
is named, and hands out `Cloud` objects (cloudguard.cloud.cloud) that carry
its rules and one error policy: a provider with no adapter installed, or one
whose adapter cannot load, is a `Cloud` that says why, never a crash and
never a silent default adapter. A command makes its registry when it starts
(`Clouds.installed()`) and passes it, or the clouds it hands out, along;
`installed_clouds()` is the process's own, for callers given none. Stdlib
only: the core names no cloud and imports no SDK.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import EntryPoint, PackageNotFoundError, entry_points, requires

from cloudguard.cloud import records
from cloudguard.cloud.cloud import Cloud

ENTRY_POINT_GROUP = "cloudguard.adapters"
CORE_DISTRIBUTION = "cloudguard-ci"
# `cloudguard-azure==0.1.0; extra == "azure"`, as the core's metadata lists it.
_EXTRA = re.compile(
    r"""^(?P<dist>cloudguard-[\w-]+)\b[^;]*;\s*extra\s*==\s*["'](?P<extra>[\w-]+)["']"""
)


def installed_adapters() -> dict[str, EntryPoint]:
    """Installed adapters by name. Tests replace this to register a fake adapter."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


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
    """A provider named on the command line that no installed adapter serves: usage (2)."""

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


class Clouds:
    """Every installed cloud, by provider name; each adapter loaded once, thread-safe."""

    def __init__(self, adapters: Mapping[str, EntryPoint]) -> None:
        self._entry_points = dict(adapters)
        self._clouds: dict[str, Cloud] = {}
        self._lock = threading.Lock()  # sweeps run in threads; each adapter is loaded once

    @classmethod
    def installed(cls) -> Clouds:
        """The clouds installed now (the `cloudguard.adapters` entry points)."""
        return cls(installed_adapters())

    @property
    def names(self) -> list[str]:
        return sorted(self._entry_points)

    def cloud(self, name: str) -> Cloud:
        """The cloud called `name`; unavailable (saying why) when not installed or unloadable."""
        try:
            return self._clouds[name]
        except KeyError:
            pass
        with self._lock:
            if name not in self._clouds:
                self._clouds[name] = self._load(name)
            return self._clouds[name]

    def require(self, names: Iterable[str]) -> list[Cloud]:
        """The clouds named on a command line, once each; one not installed is a usage error."""
        for name in names:
            if name not in self._entry_points:
                raise UnknownProviderError(name, self.names)
        return [self.cloud(name) for name in dict.fromkeys(names)]

    def available(self) -> list[Cloud]:
        """Every installed cloud whose adapter loads, in name order (export parsers are
        tried so)."""
        return [cloud for name in self.names if (cloud := self.cloud(name)).adapter is not None]

    def _load(self, name: str) -> Cloud:
        entry_point = self._entry_points.get(name)
        if entry_point is None:
            return Cloud(name, None, f"not installed (installed: {_shown(self.names)})")
        try:
            adapter = entry_point.load()()
        except Exception as exc:  # one that cannot load sweeps and reaps nothing, saying why
            return Cloud(name, None, f"cannot load {entry_point.value}: {exc!r}")
        return Cloud(name, adapter)


def _shown(names: list[str]) -> str:
    return ", ".join(names) or "none installed"


_process: tuple[Callable[[], Mapping[str, EntryPoint]], Clouds] | None = None
_process_lock = threading.Lock()


def installed_clouds() -> Clouds:
    """The process's registry, for callers given none (made once; made again when
    `installed_adapters` is replaced, as tests do to register a fake)."""
    global _process
    current = _process
    if current is None or current[0] is not installed_adapters:
        with _process_lock:
            if _process is None or _process[0] is not installed_adapters:
                _process = (installed_adapters, Clouds(installed_adapters()))
            current = _process
    return current[1]


def _names_case_insensitive(provider: str) -> bool:
    return installed_clouds().cloud(provider).case_insensitive_names


# `Resource.tag` compares a provider's tag names as its adapter says; the records sit
# below this registry and never import it, so it answers for them.
records.answer_name_case(_names_case_insensitive)
