"""The audit, again, for one live resource: its own classifier, evidence read now, apply's policy.

Apply never trusts a plan's verdict, policy or evidence: for each item it
runs `run_audit` (the very engine `cloudguard audit` runs) over the one
resource just read, with the controller records, repository and fixture
corpus read again, and an `AuditPolicy` built from configuration and the command
line. Evidence that cannot be read is an `EvidenceError`: nothing more is
acted on (75). Each item's cloud (its rules: tag-name case, verbs) comes from
the registry the price table was made for, as in the audit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from cloudguard.audit.auditor import run_audit
from cloudguard.audit.cost import PriceTable
from cloudguard.audit.evidence.interface import EvidenceError, EvidenceRequest
from cloudguard.audit.inventories import Inventory
from cloudguard.cloud.cloud import Cloud
from cloudguard.cloud.records import Resource, SweepResult
from cloudguard.documents.findings import AuditPolicy, AuditReport, Finding


@dataclass(frozen=True)
class _Many:
    resources: tuple[Resource, ...]

    def read(self) -> SweepResult:
        return SweepResult(self.resources)


@dataclass(frozen=True)
class LiveAudit:
    request: EvidenceRequest
    policy: AuditPolicy
    prices: PriceTable
    clock: Callable[[], datetime]

    def cloud(self, provider: str) -> Cloud:
        return self.prices.clouds.cloud(provider)

    def check_evidence(self) -> None:
        """Read every evidence source once, before anything is read from a cloud."""
        self._audit([])

    def classify(self, resource: Resource) -> Finding | None:
        """The audit's finding for `resource` now; None: not the fleet's."""
        return self.classify_all([resource])[resource.id.casefold()]

    def classify_all(self, resources: list[Resource]) -> dict[str, Finding | None]:
        """Each resource's finding now (by casefolded id), from one read of the evidence:
        a resource group and everything it holds."""
        report = self._audit([_Many(tuple(resources))])
        found = {f.resource.id.casefold(): f for f in report.findings}
        return {r.id.casefold(): found.get(r.id.casefold()) for r in resources}

    def _audit(self, inventories: list[Inventory]) -> AuditReport:
        report = run_audit(inventories, self.request, self.policy, self.prices, self.clock())
        if report.failures:
            first = report.failures[0]
            raise EvidenceError(first.source, first.reason)
        return report
