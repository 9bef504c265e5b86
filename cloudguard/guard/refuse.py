"""The refusing provider and CLI shims: record the attempt, then refuse with exit 98.

Stdlib only; run as `python3 -IS <shim>` from the seal's bin directory, so
it starts in about the time of a bare interpreter. The seal bakes its
policy (cloudguard.guard.policy: which variables are identity, which values the seal owns)
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
    from collections.abc import Sequence

    from cloudguard.guard.policy import Policy  # the shim imports it itself: see seal.py

REACH_REFUSED = 98  # cloudguard.exit_codes.REACH_REFUSED, not imported: one module fewer to load


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
