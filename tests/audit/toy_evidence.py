"""A test-only evidence source with an option of its own: a source is one module and one line.

`toy-tickets`: a ticket system's list of the cloud ids its open tickets hold,
one a line, in the file given by `--toy-tickets FILE` (`toy-tickets` in
cloudguard.toml). A cloud id a ticket holds is owned. Registered by the one
line a test adds to `cloudguard.audit.evidence.source_registry.SOURCES`; the
command line, cloudguard.toml, the report and `reap apply` learn the rest
from its `Factory`, as they do for the core's own sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cloudguard.audit.evidence.interface import (
    EvidenceError,
    EvidenceRequest,
    EvidenceSource,
    Factory,
    Facts,
    NotSupplied,
    Question,
    cloud_id_key,
)
from cloudguard.cloud.options import EVIDENCE_PANEL, Shown, declare, string

NAME = "toy-tickets"

TICKETS = declare(
    "toy_tickets",
    parse=string,
    default=None,
    metavar="FILE",
    help="Toy tickets: cloud ids held by open tickets, one a line.",
    apply=Shown("Toy tickets, re-read before each item.", "FILE"),
    path=True,
    panel=EVIDENCE_PANEL,
)


@dataclass(frozen=True)
class Tickets:
    path: str
    name: str = NAME
    proves_ownership: bool = True

    @property
    def reads(self) -> str:
        return f"toy tickets {self.path}"

    def facts(self, question: Question) -> Facts:
        try:
            lines = Path(self.path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise EvidenceError(self.reads, f"cannot read: {exc}") from exc
        return Facts(owned_ids=frozenset(cloud_id_key(line) for line in lines if line.strip()))


def _build(request: EvidenceRequest) -> EvidenceSource | NotSupplied:
    path = request.value(TICKETS)
    return NotSupplied("no --toy-tickets") if path is None else Tickets(path)


FACTORY = Factory(_build, options=(TICKETS,))
