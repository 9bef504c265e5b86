"""The order human reports list findings in: by verdict (most urgent first), billable first."""

from __future__ import annotations

from collections.abc import Iterable

from cloudguard.documents.findings import VERDICTS, Finding

_RANK = {verdict: rank for rank, verdict in enumerate(VERDICTS)}


def report_order(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(
        findings,
        key=lambda f: (
            _RANK.get(f.verdict, len(VERDICTS)),
            not f.cost.billable,
            -(f.cost.accrued or 0.0),
            f.resource.name,
        ),
    )
