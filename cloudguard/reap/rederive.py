"""The audit, again, for one live resource: its own classifier, evidence read now, apply's policy.

Apply never trusts a plan's verdict, policy or evidence: for each item it
runs `run_audit` (the very engine `cloudguard audit` runs) over the one
resource just read, with the controller records, repository and fixture
corpus read again, and a `Policy` built from configuration and the command
line. Evidence that cannot be read is an `EvidenceError`: nothing more is
acted on (75).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from cloudguard.audit.cost import PriceTable
from cloudguard.audit.engine import EvidenceSources, run_audit
from cloudguard.audit.evidence import EvidenceError
from cloudguard.audit.findings import AuditReport, Finding, Policy
from cloudguard.audit.model import Inventory, Resource, SweepResult


@dataclass(frozen=True)
class _One:
    resource: Resource

    def read(self) -> SweepResult:
        return SweepResult((self.resource,))


@dataclass(frozen=True)
class LiveAudit:
    sources: EvidenceSources
    policy: Policy
    prices: PriceTable
    clock: Callable[[], datetime]

    def check_evidence(self) -> None:
        """Read every evidence source once, before anything is read from a cloud."""
        self._audit([])

    def classify(self, resource: Resource) -> Finding | None:
        """The audit's finding for `resource` now; None: not the fleet's."""
        report = self._audit([_One(resource)])
        return report.findings[0] if report.findings else None

    def _audit(self, inventories: list[Inventory]) -> AuditReport:
        report = run_audit(inventories, self.sources, self.policy, self.prices, self.clock())
        if report.failures:
            first = report.failures[0]
            raise EvidenceError(first.source, first.reason)
        return report
