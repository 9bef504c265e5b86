"""The refusing provider and CLI shims: record the attempt, then refuse with exit 98.

Stdlib only; run as `python3 -IS <shim>` from the seal's bin directory, so
it starts in about the time of a bare interpreter. The seal bakes its
policy (which variables are identity, which values the seal itself owns)
into each shim, so nothing is parsed here.

Standard input is never read: a payload on it is never recorded, and a
stdin that never closes cannot hang the refusal.
"""

from __future__ import annotations

import posix
import sys

from cloudguard.guard import reach, redaction

TYPE_CHECKING = False  # typing and collections.abc cost start-up time; mypy reads this by name
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

REACH_REFUSED = 98  # cloudguard.exit_codes.REACH_REFUSED, not imported: one module fewer to load
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


def _target(tool: str, args: Sequence[str]) -> str:
    """`az vm create` from `az vm create --name x`: the tool and its command words.

    Only plain words count (`azcopy copy URL` is `azcopy copy`): the target is printed
    and recorded as it is, and a URL or a value may carry a secret.
    """
    words: list[str] = []
    for arg in args[:2]:
        if not arg or arg.startswith("-") or not arg.replace("-", "").isalnum():
            break
        words.append(redaction.printable(arg))
    return " ".join([tool, *words])


def _hint(via: str, tool: str, policy: Policy) -> str:
    from cloudguard.guard import hints  # only on the refusal: nothing else here needs it

    variable = policy.provider_variables[0] if policy.provider_variables else "the provider"
    if via == "provider":
        status = (
            "no real provider is bound in a sealed run;\n"
            f"  {variable} is cloudguard's refusing provider."
        )
    else:
        status = f"`{tool}` is cloudguard's refusing shim in a sealed run."
    advice = hints.for_channel(via, variable=variable, indent="    ")
    return f"{status}\n  To make the test hermetic:\n    {advice}"


def main(
    *,
    via: str,
    tool: str,
    policy: Policy,
    argv: Sequence[str] | None = None,
    log: str | None = None,
    keepers: Sequence[str] = (),
) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    environ = reach.environment()
    record = reach.reach_record(
        via=via,
        argv=[tool, *args],
        target=_target(tool, args),
        identity_vars=policy.identity_vars(environ),
        environ=environ,
    )
    from cloudguard.escape import one_line  # argv and the test name come from outside

    shown = one_line(" ".join(record["argv"]), 2000)  # type: ignore[arg-type]
    status = reach.record_status(
        record,
        keepers=reach.keepers(keepers, environ),
        log=log or environ.get(reach.LOG_VARIABLE, ""),
    )
    test = one_line(str(record["test"]), 300) if record["test"] else ""
    try:
        sys.stderr.write(
            f"cloudguard: refused `{shown}` ({via}): {_hint(via, tool, policy)}\n"
            f"  {status}" + (f" (test: {test})" if test else "") + "\n"
        )
        sys.stderr.flush()
    except OSError:  # nobody reads our stderr (a closed pipe): the refusal stands all the same
        posix._exit(REACH_REFUSED)
    sys.exit(REACH_REFUSED)
