"""What the seal bakes into every refuser: which variables are identity, which it owns.

`Policy` is shared by the seal (which writes its `repr` into each shim), the
refusers (which name the identity variables still set), the pytest session
and the in-process guards. Stdlib only and free of imports, like the
refusers it is loaded by: a shim starts in about a bare interpreter's time.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing and collections.abc cost start-up time; mypy reads this by name
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

# The runner's own contract (CLOUDGUARD_REACH_LOG, CLOUDGUARD_TEST, ...): never sealed.
RUNNER_PREFIX = "CLOUDGUARD_"
# The variables the seal sets to its own values (seal.Seal.redirections; a test keeps the two
# lists one): a provider binding never replaces one, and the registry's validation
# reads them here, from nothing that imports the registry.
REDIRECTED = (
    "AZURE_CONFIG_DIR",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_EC2_METADATA_DISABLED",
    "CLOUDSDK_CONFIG",
    "NO_GCE_CHECK",
)
# Sealed names a pytest session's suite set itself (pytest-env, conftest.py), comma-separated:
# its own fakes, set by the plugin for every process the session starts.
KEPT_VARIABLE = "CLOUDGUARD_KEPT"


def declared_by_the_suite(environ: Mapping[str, str]) -> frozenset[str]:
    """The sealed names the suite under test declared itself: its fakes, never a leak."""
    return frozenset(name for name in environ.get(KEPT_VARIABLE, "").split(",") if name)


class Policy:
    """What the seal baked into a refuser. A plain class: dataclasses would import inspect."""

    def __init__(
        self,
        *,
        names: Iterable[str] = (),
        prefixes: Sequence[str] = (),
        exempt: Sequence[str] = (),
        owned: Mapping[str, str] | None = None,
        provider_variables: Sequence[str] = (),
    ) -> None:
        self.names = frozenset(names)
        self.prefixes = tuple(prefixes)
        self.exempt = tuple(exempt)
        self.owned = dict(owned or {})
        self.provider_variables = tuple(provider_variables)

    def __repr__(self) -> str:
        # Source code: the seal writes this into every refuser it makes.
        return (
            f"Policy(names={sorted(self.names)!r}, prefixes={list(self.prefixes)!r}, "
            f"exempt={list(self.exempt)!r}, owned={self.owned!r}, "
            f"provider_variables={list(self.provider_variables)!r})"
        )

    def identity_vars(self, environ: Mapping[str, str]) -> list[str]:
        """Names of identity variables still set: neither the seal's own bindings nor the
        suite's own declarations (`KEPT_VARIABLE`)."""
        found = []
        kept = declared_by_the_suite(environ)
        for name, value in environ.items():
            if name.startswith(self.exempt) or name in kept:
                continue
            if not (name in self.names or name.startswith(self.prefixes)):
                continue
            if self.owned.get(name) == value:
                continue
            if name in self.provider_variables and _is_refuser(value):
                continue
            found.append(name)
        return sorted(found)


def _is_refuser(command: str) -> bool:
    words = command.split()
    return bool(words) and words[0].rpartition("/")[2] == "cloudguard-refusing-provider"
