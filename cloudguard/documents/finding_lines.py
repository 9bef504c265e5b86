"""A finding's line of the JSON audit report, joined from parts many findings share.

The report streams one finding a line (audit_report.write_report). Each line
is exactly what `json.dumps(finding_document(finding, report),
ensure_ascii=False)` writes, and the tests hold them equal, but it is joined
without building the document: most of a finding repeats across a fleet (its
verdict and checks, its price, its cloud, account and location, the history's
word on a steady night), so each of those parts is encoded once and reused,
and only what a finding has of its own (its ids, name, creation time, tags,
age and cost so far) is encoded per line. A 100,000-finding report's lines
took about twice as long built and encoded as documents. The shared parts of a
line are one `%` template, found by one key of everything they state.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import datetime
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, NoReturn

from cloudguard.documents.findings import AuditReport, Finding
from cloudguard.history.store_records import FindingHistory

_LITERALS = {None: "null", True: "true", False: "false"}


def json_encoder() -> Callable[[Any], str]:
    """A value's JSON as `json.dumps(..., ensure_ascii=False)` writes it, by one C encoder
    made once (`JSONEncoder.encode` makes one per call) that skips the check for cycles
    (what it is given is a tree just built)."""
    if c_make_encoder is None:  # an interpreter without the C accelerator
        return json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
    encoder = c_make_encoder(
        None, _unencodable, encode_basestring, None, ": ", ", ", False, False, True
    )
    return lambda value: "".join(encoder(value, 0))


def _unencodable(value: object) -> NoReturn:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class FindingLines:
    """`line(finding)`: the finding's line of `report`'s JSON."""

    def __init__(self, report: AuditReport, document: Callable[[Finding], dict[str, Any]]):
        self._encode = json_encoder()
        self._document = document  # the finding's document: what a rare line is encoded from
        self._templates: dict[tuple[Any, ...], str] = {}
        self._cents: dict[float, str] = {}
        self._history = report.history.findings if report.history is not None else {}
        self._acknowledged = report.acknowledged

    def line(self, finding: Finding) -> str:
        r, checks, cost, age = finding.resource, finding.checks, finding.cost, finding.age
        key = (r.provider, r.id)
        if key in self._acknowledged:  # a few at most: encoded whole
            return self._encode(self._document(finding))
        found = self._history.get(key)
        hourly, created = cost.hourly, r.created
        # What the line shares with other findings, one key: the line's template (its shared
        # parts encoded, a slot for each value of its own), one lookup a line. Keyed by the
        # price's type too: 1 and 1.0 are equal keys, and written differently.
        shape: tuple[Any, ...] = (
            finding.verdict, finding.reasons, checks.controller_record, checks.fixture_id,
            checks.generation, checks.generation_detail, r.provider, r.account, r.region,
            r.group, r.kind, r.size, r.power_state, r.source, cost.billable, cost.note, hourly,
            type(hourly), cost.currency, cost.source,
        )  # fmt: skip
        if found is not None:
            # What the history's head states (one per first sighting on a steady night).
            shape += (found.change, found.first_seen, found.previous_verdict, found.returns)
        template = self._templates.get(shape)
        if template is None:
            template = self._templates[shape] = self._template(finding, found)
        task_id, generation = finding.task_id, finding.generation
        own: tuple[str, ...] = (
            "null" if task_id is None else encode_basestring(task_id),
            "null" if generation is None else encode_basestring(generation),
            encode_basestring(r.id),
            encode_basestring(r.name),
            "null" if created is None else f'"{created.isoformat()}"',
            self._encode(r.tags if type(r.tags) is dict else dict(r.tags)),
            encode_basestring(r.uid),
            "null" if age is None else str(int(age.total_seconds())),
            _number(cost.accrued),
        )
        if found is not None:
            own += (self._rounded(found.observed_hours), self._rounded(found.accrued))
        return template % own

    def _rounded(self, value: float) -> str:
        """`value` to the cent, written: once for each value (a fleet's nights since first
        seen and prices repeat), but zero (0.0 and -0.0 are one key, written apart)."""
        text = self._cents.get(value) if type(value) is float else None
        if text is None:
            text = _number(round(value, 2))
            if type(value) is float and value:
                self._cents[value] = text
        return text

    def _template(self, finding: Finding, found: FindingHistory | None) -> str:
        """The line of `finding` with a `%s` slot for each value of its own (its shared parts
        `%`-escaped), in the order `line` gives them."""
        r, checks, cost, e = finding.resource, finding.checks, finding.cost, self._encode
        shared = (
            _head(e, finding.verdict, finding.reasons),
            ', "generation": ',
            _checks(e, checks.controller_record, checks.fixture_id, checks.generation,
                    checks.generation_detail) + _place(e, r.provider, r.account, r.region, r.group),
            ', "name": ',
            _what(e, r.kind, r.size, r.power_state),
            ', "tags": ',
            _source(e, r.source),
            '}, "age_seconds": ',
            _price(e, cost.billable, cost.note, cost.hourly, type(cost.hourly)),
            _currency(e, cost.currency, cost.source)
            + ("null" if found is None else
               _found(e, found.change, found.first_seen, found.previous_verdict, found.returns)),
        )  # fmt: skip
        parts: tuple[str, ...] = (
            (*shared[:-1], shared[-1] + ', "acknowledgement": null}')
            if found is None
            else (*shared, ', "accrued_observed": ', '}, "acknowledgement": null}')
        )
        return "%s".join([part.replace("%", "%%") for part in parts])


# Each part is text between two values a finding has of its own; it ends where the next
# such value begins.

Encode = Callable[[Any], str]


def _head(e: Encode, verdict: str, reasons: tuple[str, ...]) -> str:
    return f'{{"verdict": {e(verdict)}, "reasons": {e(list(reasons))}, "task_id": '


def _checks(e: Encode, record: str, fixture: str, generation: str, detail: str) -> str:
    checks = {
        "controller_record": record,
        "fixture_id": fixture,
        "generation": generation,
        "generation_detail": detail,
    }
    return f', "checks": {e(checks)}'


def _place(e: Encode, provider: str, account: str, region: str, group: str) -> str:
    place = {"provider": provider, "account": account, "region": region, "group": group}
    return f', "resource": {e(place)[:-1]}, "id": '


def _what(e: Encode, kind: str, size: str, power_state: str) -> str:
    return f', "kind": {e(kind)}, "size": {e(size)}, "power_state": {e(power_state)}, "created": '


def _source(e: Encode, source: str) -> str:
    return f', "source": {e(source)}, "uid": '


def _price(e: Encode, billable: bool | None, note: str, hourly: float | None, _: type) -> str:
    # Keyed by the price's type too: 1 and 1.0 are equal keys, and written differently.
    return (
        f', "billable": {_LITERALS[billable]}, "cost": {{"note": {e(note)}, '
        f'"hourly": {_number(hourly)}, "accrued": '
    )


def _currency(e: Encode, currency: str, source: str) -> str:
    return f', "currency": {e(currency)}, "source": {e(source)}}}, "history": '


def _found(e: Encode, change: str, first_seen: datetime, previous: str | None, returns: int) -> str:
    return (
        f'{{"change": {e(change)}, "first_seen": {e(first_seen.isoformat())}, '
        f'"previous_verdict": {e(previous)}, "returns": {e(returns)}, "observed_hours": '
    )


def _string(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def _number(value: float | None) -> str:
    if value is None:
        return "null"
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value)  # NaN, Infinity, an int: as json writes them
