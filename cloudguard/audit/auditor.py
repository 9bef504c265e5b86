"""The auditor: inventories + evidence -> an `AuditReport`.

It reads every inventory, asks each evidence source once about all the
distinct task ids and generations it saw, then classifies each resource.
Anything unreadable is a `SourceFailure` in the report (exit 75), and the
evidence it would have given is "not checked", so a failure never turns into
a false "ok" or a false "orphan".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from cloudguard.audit.classify import classify
from cloudguard.audit.cost import PriceTable
from cloudguard.audit.evidence.interface import EvidenceRequest, Question
from cloudguard.audit.evidence.source_registry import gather, locations
from cloudguard.audit.inventories import Inventory
from cloudguard.audit.price_lists import PriceLists
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.kinds import RESOURCE_GROUP, wanted
from cloudguard.cloud.records import Resource, SourceFailure
from cloudguard.documents.findings import (
    UNVERIFIED,
    AuditPolicy,
    AuditReport,
    Finding,
    GroupOthers,
)

# progress(stage, done, total): the CLI draws a bar from it when stderr is a TTY.
Progress = Callable[[str, int, int], None]


def _quiet(stage: str, done: int, total: int) -> None:
    pass


def run_audit(
    inventories: Sequence[Inventory],
    request: EvidenceRequest,
    policy: AuditPolicy,
    prices: PriceTable,
    now: datetime,
    progress: Progress = _quiet,
    price_lists: PriceLists | None = None,
) -> AuditReport:
    """The report of `inventories`, judged with the rules of the clouds `prices` was made
    for (tag-name case, ids, billing), priced from `price_lists` first when given (the
    clouds' own lists, through the cache) and the bundled table otherwise."""
    clouds = prices.clouds
    failures: list[SourceFailure] = []
    fleet = _Fleet(clouds, wanted(policy.kinds))
    for done, inventory in enumerate(inventories):
        progress("inventories", done, len(inventories))
        result = inventory.read()
        fleet.add(result.resources)
        failures.extend(result.failures)
        del result  # each inventory's records are dropped once taken in
    progress("inventories", len(inventories), len(inventories))
    resources = fleet.resources
    if price_lists is not None:
        prices = prices.with_listed(price_lists.resolve(resources, clouds))

    task_ids: set[str] = set()
    generations: set[str] = set()
    # Each resource's task id and generation as read here, for its classification too
    # (None: no task id, read again there with the leaked-by tags).
    tagged: list[tuple[str, str | None] | None] = []
    for resource in resources:
        tag = clouds.cloud(resource.provider).tag
        task_id = tag(resource.tags, policy.task_tag)
        if task_id is None:
            tagged.append(None)
            continue
        task_ids.add(task_id)
        if (generation := tag(resource.tags, policy.generation_tag)) is not None:
            generations.add(generation)
        tagged.append((task_id, generation))
    gathered = gather(request, Question(frozenset(task_ids), frozenset(generations)))
    failures.extend(gathered.failures)
    evidence, checked = gathered.evidence, gathered.checked

    findings: list[Finding] = []
    step = max(len(resources) // 100, 1)
    for index, resource in enumerate(resources):
        if index % step == 0:
            progress("classify", index, len(resources))
        finding = classify(resource, evidence, policy, prices, now, clouds, tagged[index])
        if finding is not None:
            findings.append(finding)
    progress("classify", len(resources), len(resources))

    return AuditReport(
        generated_at=now,
        policy=policy,
        findings=tuple(findings),
        resources_seen=len(resources),
        # Every resource is either a finding or not the fleet's: a leaked one without
        # the task tag is a finding, so it is not counted again as untagged.
        untagged=len(resources) - len(findings),
        failures=tuple(failures),
        evidence_checked=checked,
        prices=prices.info,
        warnings=(
            *fleet.warnings(),
            *_unknown_power_warnings(findings),
            *(price_lists.warnings if price_lists is not None else ()),
            *_unknown_age_warnings(findings),
            *_unverified_warnings(findings, policy),
        ),
        evidence_sources=locations(request),
        others_in_groups=_others_in_groups(resources, findings),
    )


def _others_in_groups(
    resources: Sequence[Resource], findings: Sequence[Finding]
) -> tuple[GroupOthers, ...]:
    """What each resource group that is a finding holds that is not the fleet's: a plan
    must not delete such a group whole (it would delete them), but reap its members."""

    def where(r: Resource) -> tuple[str, str, str]:
        return (r.provider, r.account.casefold(), r.group.casefold())

    groups = {where(f.resource) for f in findings if f.resource.kind == RESOURCE_GROUP}
    if not groups:
        return ()
    fleet = {(f.resource.provider, f.resource.id.casefold()) for f in findings}
    others: dict[tuple[str, str, str], list[Resource]] = {}
    for r in resources:
        theirs = (r.provider, r.id.casefold()) not in fleet
        if r.kind != RESOURCE_GROUP and where(r) in groups and theirs:
            others.setdefault(where(r), []).append(r)
    return tuple(
        GroupOthers(held[0].provider, held[0].account, held[0].group, len(held),
                    f"{held[0].kind} {held[0].id}")
        for _, held in sorted(others.items())
    )  # fmt: skip


class _Fleet:
    """Resources taken in from every inventory, each resource once.

    The same VM seen twice (the same export given twice, overlapping exports, an
    export and a live sweep) would double its cost: the first sighting counts,
    the others are counted in a warning naming where they came from.
    """

    def __init__(self, clouds: Clouds, kinds: frozenset[str] | None = None) -> None:
        self._clouds = clouds
        self._kinds = kinds  # None: every kind
        self.resources: list[Resource] = []
        self._seen: dict[tuple[str, str], str] = {}  # identity -> source of the first sighting
        self._duplicates: Counter[tuple[str, str]] = Counter()  # (first, again) sources
        self._example: dict[tuple[str, str], str] = {}

    def add(self, resources: Iterable[Resource]) -> None:
        id_keys: dict[str, Callable[[str], str]] = {}  # each provider's, asked once
        for resource in resources:
            if self._kinds is not None and resource.kind not in self._kinds:
                continue  # `--kind` asked for others: not counted at all
            # Some clouds' ids are case-insensitive (ARM echoes whatever case the creator
            # used); EC2 ids are not: the cloud says which (`case_insensitive_names`).
            provider = resource.provider
            id_key = id_keys.get(provider)
            if id_key is None:
                id_key = id_keys[provider] = self._clouds.cloud(provider).id_key_of
            key = (provider, id_key(resource.id))
            first = self._seen.get(key)
            if first is None:
                self._seen[key] = resource.source
                self.resources.append(resource)
                continue
            pair = (first, resource.source)
            self._duplicates[pair] += 1
            self._example.setdefault(pair, resource.id)

    def warnings(self) -> list[str]:
        return [
            f"{count} duplicate resource{'s' if count > 1 else ''} (same id, e.g. "
            f"{self._example[pair]}) in {_where(pair[1])}, already seen in "
            f"{_where(pair[0])}: counted once"
            for pair, count in self._duplicates.items()
        ]


def _where(source: str) -> str:
    return source or "an unnamed source"


def _unknown_power_warnings(findings: Iterable[Finding]) -> list[str]:
    unknown = Counter(
        f.resource.source for f in findings if f.cost.billable is None and f.resource.kind == "vm"
    )
    return [
        f"{count} fleet VM{'s' if count > 1 else ''} from {_where(source)} with no power state: "
        "cost unknown, not zero (`az vm list` prints power state only with -d/--show-details)"
        for source, count in unknown.items()
    ]


def _unknown_age_warnings(findings: Iterable[Finding]) -> list[str]:
    # `az group list` prints no creation time for any group: a warning on every audit
    # would say nothing; a group is judged without an age (docs/audit.md).
    aged = [f for f in findings if f.age is None and f.resource.kind != RESOURCE_GROUP]
    unknown = Counter(f.resource.source for f in aged)
    example = {f.resource.source: f.resource.name for f in aged}
    return [
        f"{count} fleet resource{'s' if count > 1 else ''} from {_where(source)} (e.g. "
        f"{example[source]}) with no creation time, or one that is not an ISO 8601 time: "
        "age unknown, so --grace holds none of them pending"
        for source, count in unknown.items()
    ]


def _unverified_warnings(findings: Iterable[Finding], policy: AuditPolicy) -> list[str]:
    count = sum(1 for f in findings if f.verdict == UNVERIFIED)
    if not count or not policy.fail_on_unverified:
        return []
    return [
        f"{count} fleet resource{'s' if count > 1 else ''} unverified: no evidence source "
        "could judge them (the evidence lines say which were not checked), and an unjudged "
        "resource fails the audit (exit 1): supply the evidence, or accept them by name with "
        "--allow-unverified"
    ]
