"""Record, then refuse: the one way an in-process guard says no.

The record is the alarm and the raise is the containment. Callers swallow
exceptions (botocore's IMDS fetcher does, azure-identity's credential chain
does, test code does), so the record is written first and is what fails
the test; the exception only stops the request.

`CloudReachRefused` is deliberately a plain `Exception`: not an `OSError`
(urllib3, requests and asyncio retry or fall through those), not an
`AzureError` (azure-core's RetryPolicy retries those: 4 records for one
call), not a botocore error (its retry handlers retry connection errors:
3 records). It propagates once, so one logical call makes one record.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import NoReturn

    from cloudguard.guard.policy import Policy


class CloudReachRefused(Exception):
    """An in-process guard refused a request to a real cloud, after recording it."""

    def __init__(self, message: str, record: Mapping[str, object]) -> None:
        super().__init__(message)
        self.record = record


class _Binding:
    """Where records go, and how identity variables are named. Set by `install`."""

    log: str | None = None
    keepers: Sequence[str] = ()  # the record keepers the session that installed us names
    policy: Policy | None = None
    # A Python child is handed no policy: its sitecustomize hands this instead, which
    # rebuilds the policy from the live seal, on the first refusal only.
    find_policy: Callable[[], Policy | None] | None = None


binding = _Binding()


def bind(
    log: str | None,
    policy: Policy | None = None,
    find_policy: Callable[[], Policy | None] | None = None,
    keepers: Sequence[str] = (),
) -> None:
    binding.log = log
    binding.keepers = tuple(keepers)
    binding.policy = policy
    binding.find_policy = find_policy


def _identity_vars() -> list[str]:
    policy = binding.policy
    if policy is None and binding.find_policy is not None:
        policy = binding.policy = binding.find_policy()
    return policy.identity_vars(os.environ) if policy is not None else []


def refuse(
    *,
    via: str,
    target: str,
    argv: Sequence[str],
    what: str,
    hint: str,
    extra: Mapping[str, object] | None = None,
    already_recorded: bool = False,
) -> NoReturn:
    """Record the attempt in the bound reach log, then raise CloudReachRefused.

    `hint`: the refusing guard's advice (its declaration's), shown after "To make the
    test hermetic:". `already_recorded`: the same logical call was recorded for this
    target before (an SDK retrying inside one call); refuse again without a second record.
    """
    __tracebackhide__ = True  # cloudguard's own frames: pytest leaves them out of tracebacks
    # Here, not at the top: every sealed Python child imports this module.
    from cloudguard.guard import reach

    record = reach.reach_record(via=via, argv=argv, target=target, identity_vars=_identity_vars())
    record.update(extra or {})
    if already_recorded:
        status = "already recorded for this call: the test fails even if this is caught"
    else:
        status = reach.record_status(
            record,
            keepers=reach.keepers(binding.keepers, os.environ),
            log=binding.log or os.environ.get(reach.LOG_VARIABLE, ""),
        )
        if status.startswith("recorded"):
            status += ": the test fails even if this exception is caught"
    test = record["test"]
    message = (
        f"cloudguard refused {what} (via {via}); no packet left this machine.\n"
        f"  {status}" + (f"\n  test: {test}" if test else "") + "\n"
        "  To make the test hermetic:\n    " + hint.replace("\n", "\n    ")
    )
    raise CloudReachRefused(message, record)
