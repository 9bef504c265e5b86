"""Whether `reap apply` may act on a plan at all, checked before anything is read or done.

Four rules, each returning the reason it refuses (or None), which the command
(cloudguard.cli.reap) turns into its exit code: `USAGE` (2, naming the option
or file to change) or `REFUSED` (97, the plan is not the one approved):

- `approval`: `--yes` acts on the plan that was reviewed, byte for byte;
- `age`: what a plan knows is as old as its audit; past `--max-age` it is not acted on;
- `accounts`: only listed subscriptions / AWS accounts (as aws-nuke does);
- `evidence_bound`: apply re-reads the evidence the plan's audit read.

Testable without typer: nothing here prints or exits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cloudguard.documents.plan import Plan
from cloudguard.escape import one_line

USAGE = "usage"  # exit 2: change the named option or file
REFUSED = "refused"  # exit 97: the plan is not the one approved

# A plan "made" this far in the future is a clock or an edit, not a plan.
_CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class Refusal:
    """Why the plan is not acted on, and where the operator changes that (`param_hint`)."""

    kind: str  # USAGE or REFUSED
    reason: str
    param_hint: str | None = None


def approval(approve: str | None, digest: str, plan_path: Path) -> Refusal | None:
    """--yes acts on the plan that was reviewed, byte for byte, or on nothing."""
    if approve is None:
        return Refusal(
            USAGE,
            f"--yes acts only on a reviewed plan: add --approve {digest} (the digest "
            "`reap plan` and the dry run print) after reviewing it",
            "--approve",
        )
    given = approve.strip().lower().removeprefix("sha256:")
    if given != digest.removeprefix("sha256:"):
        return Refusal(
            REFUSED,
            f"{one_line(str(plan_path), 300)} is not the plan that was approved "
            f"(its digest is {digest}, approved {one_line(approve, 80)}): it changed since "
            "review; review it again",
        )
    return None


def age(plan: Plan, max_age: timedelta, now: datetime) -> Refusal | None:
    """What a plan knows is as old as its audit; past --max-age it is not acted on."""
    made = min(plan.created_at, plan.audit_generated_at)
    if max(plan.created_at, plan.audit_generated_at) > now + _CLOCK_SKEW:
        return Refusal(
            USAGE, "the plan or its audit is dated in the future: make a new plan", "PLAN.json"
        )
    if now - made > max_age:
        return Refusal(
            USAGE,
            f"the plan is too old: its audit is from {plan.audit_generated_at.isoformat()} "
            f"({_hours(now - made)} ago), older than --max-age {_hours(max_age)}; "
            "run the audit again and make a new plan",
            "PLAN.json",
        )
    return None


def _hours(span: timedelta) -> str:
    return f"{span.total_seconds() / 3600:.1f}h"


def accounts(plan: Plan, listed: Sequence[str] | None, *, required: bool) -> Refusal | None:
    """Only listed subscriptions / AWS accounts, checked before any request (as aws-nuke does)."""
    if listed is None:
        if required:
            return Refusal(
                USAGE,
                "--yes acts only in listed accounts: set [reap] accounts = [...] "
                "(subscription ids / AWS account ids) in cloudguard.toml",
                "--yes",
            )
        return None
    allowed = {a.strip().casefold() for a in listed if a.strip()}
    outside = [i for i in plan.items if i.account.strip().casefold() not in allowed]
    if outside:
        shown = "; ".join(
            f"{one_line(i.name)} in {one_line(i.account) or '(no account)'}" for i in outside[:5]
        )
        return Refusal(
            USAGE,
            f"{len(outside)} item(s) outside [reap] accounts: {shown}; nothing was read or done",
            "PLAN.json",
        )
    return None


def evidence_bound(plan: Plan, named: Mapping[str, Any]) -> Refusal | None:
    """Apply re-reads the evidence the plan's audit read, not other sources: given another
    (an empty controller home, another repository), a suspect would be judged an orphan.
    `named`: the locations of the evidence this apply would read, by option."""
    if named == dict(plan.evidence):
        return None
    differences = [
        f"--{key} {_shown_location(named.get(key))} (the plan's audit: "
        f"{_shown_location(plan.evidence.get(key))})"
        for key in sorted({*named, *plan.evidence})
        if named.get(key) != plan.evidence.get(key)
    ]
    return Refusal(
        USAGE,
        "reap apply must re-read the evidence the plan's audit read, which the plan binds: "
        + "; ".join(differences)
        + ". Give the same options (or audit and plan again); nothing was read or done",
        "PLAN.json",
    )


def _shown_location(value: Any) -> str:
    if value is None:
        return "not given"
    if isinstance(value, list):
        return " ".join(one_line(str(v), 200) for v in value)
    return one_line(str(value), 200)
