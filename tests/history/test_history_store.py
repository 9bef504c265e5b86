"""The history store remembers, on SQLite and on a real PostgreSQL server alike.

Each test runs once per backend (`location` in conftest.py): what is new,
still there, gone (reaped or vanished) and back again; cost accrued between
audits at the price of the day; identity across re-creation; an audit that
finishes late; the questions `cloudguard history` asks.
"""

from __future__ import annotations

from datetime import date

import pytest
from history_helpers import audit, changes, day, gone, observed, raw_rows, vm_id
from named_checks import broken

from cloudguard.acknowledgements import Ack
from cloudguard.history.location import open_store
from cloudguard.history.store import HistoryStore
from cloudguard.history.store_records import ReapAction, ReapRun, ResourceKey


@pytest.fixture
def store(location: str) -> HistoryStore:
    return open_store(location)


def test_the_next_audit_tells_new_still_and_gone(store: HistoryStore) -> None:
    first = audit(store, 0, [observed("vm-a"), observed("vm-b"), observed("vm-c")])
    assert changes(first) == {"vm-a": "new", "vm-b": "new", "vm-c": "new"}
    assert first.previous_at is None and first.gone == ()

    second = audit(store, 1, [observed("vm-b"), observed("vm-c"), observed("vm-d")])
    assert changes(second) == {"vm-b": "still", "vm-c": "still", "vm-d": "new"}
    assert gone(second) == {"vm-a": "vanished"}, "vm-a was not seen by an audit that read all"
    assert second.previous_at == day(0)
    history = second.findings[observed("vm-b").key]
    assert (history.first_seen, history.previous_verdict) == (day(0), "orphan")


def test_a_resource_seen_again_after_it_was_gone_is_back(store: HistoryStore) -> None:
    audit(store, 0, [observed("vm-a"), observed("vm-b")])
    assert gone(audit(store, 1, [observed("vm-b")])) == {"vm-a": "vanished"}
    third = audit(store, 3, [observed("vm-a"), observed("vm-b")])
    assert changes(third) == {"vm-a": "back", "vm-b": "still"}
    back = third.findings[observed("vm-a").key]
    assert back.returns == 1 and back.first_seen == day(0)
    # Nothing accrues across the gap in which it was gone: only its first day counts... and
    # that day it had only been seen once, so it accrued nothing at all.
    assert (back.observed_hours, back.accrued) == (0.0, 0.0)
    assert third.findings[observed("vm-b").key].observed_hours == pytest.approx(72.0)


def test_cost_accrues_between_audits_at_the_price_of_the_day(store: HistoryStore) -> None:
    audit(store, 0, [observed("vm-a", hourly=0.10), observed("vm-off", billable=False)])
    second = audit(store, 1, [observed("vm-a", hourly=0.20), observed("vm-off", billable=True)])
    a = second.findings[observed("vm-a").key]
    assert a.observed_hours == pytest.approx(24.0)
    assert a.accrued == pytest.approx(2.4), broken(
        "priced-at-the-days-price", f"the first day cost {a.accrued:.2f}, not 24 h at 0.10"
    )
    off = second.findings[observed("vm-off").key]
    assert (off.observed_hours, off.accrued) == (0.0, 0.0), "deallocated at the first audit"

    third = audit(store, 2, [observed("vm-a", hourly=0.20), observed("vm-off", hourly=None)])
    a = third.findings[observed("vm-a").key]
    assert a.accrued == pytest.approx(2.4 + 24 * 0.20), "the second day at the second price"
    off = third.findings[observed("vm-off").key]
    assert off.observed_hours == pytest.approx(24.0) and off.accrued == pytest.approx(24 * 0.172)
    fourth = audit(store, 3, [observed("vm-off", hourly=0.3)])
    off = fourth.findings[observed("vm-off").key]
    assert off.observed_hours == pytest.approx(48.0), "hours of unknown price still count"
    assert off.accrued == pytest.approx(24 * 0.172), "...but add no cost"


def test_leaked_cost_is_what_accrued_while_the_verdict_was_leaking(store: HistoryStore) -> None:
    audit(store, 0, [observed("vm-a", "pending", hourly=1.0)])
    audit(store, 1, [observed("vm-a", "orphan", hourly=1.0)])
    audit(store, 2, [observed("vm-a", "ok", hourly=1.0)])
    third = audit(store, 3, [observed("vm-a", "ok", hourly=1.0)])
    assert third.findings[observed("vm-a").key].previous_verdict == "ok"
    runs = {run.at: run for run in store.runs()}
    assert [runs[day(n)].leaked_accrued for n in (1, 2, 3)] == [0.0, pytest.approx(24.0), 0.0]
    assert [runs[day(n)].accrued for n in (1, 2, 3)] == [pytest.approx(24.0)] * 3
    (timeline,) = store.timeline(vm_id("vm-a"))
    assert [e.what for e in timeline.entries] == ["pending", "orphan", "ok", "ok"]


def test_an_incomplete_audit_calls_nothing_gone(store: HistoryStore) -> None:
    audit(store, 0, [observed("vm-a"), observed("vm-b")])
    partial = audit(store, 1, [observed("vm-b")], complete=False)
    assert partial.gone == (), broken(
        "an-incomplete-audit-calls-nothing-gone",
        f"an incomplete audit called {gone(partial)} gone",
    )
    assert partial.gone_checked is False
    # The control: the same audit, complete, calls it gone.
    complete = audit(store, 2, [observed("vm-b")])
    assert gone(complete) == {"vm-a": "vanished"}


def test_only_an_audit_of_the_same_scope_calls_a_resource_gone(store: HistoryStore) -> None:
    audit(store, 0, [observed("vm-a"), observed("vm-b")], scope="prod")
    other = audit(store, 1, [observed("vm-b"), observed("vm-x")], scope="staging")
    assert other.gone == (), broken(
        "another-scope-calls-nothing-gone", f"a staging audit called {gone(other)} gone"
    )
    assert changes(other) == {"vm-b": "still", "vm-x": "new"}, "vm-b is known, whoever saw it"
    assert other.previous_at is None, "no earlier staging audit"
    again = audit(store, 2, [], scope="prod")
    assert gone(again) == {"vm-a": "vanished"}, "vm-b was last seen by staging: its business"


def test_a_reaped_resource_is_gone_as_reaped_the_others_as_vanished(store: HistoryStore) -> None:
    audit(store, 0, [observed("vm-a"), observed("vm-b"), observed("vm-c")])
    store.record_reap(
        ReapRun(day(0.5), "apply", "sha256:abc", 0, "ops"),
        [
            _reap("vm-a", "done", 0.5),
            _reap("vm-b", "failed", 0.5),
            _reap("vm-c", "done", -1),  # before the audit saw it: not what made it go
        ],
    )
    second = audit(store, 1, [])
    assert gone(second) == {"vm-a": "reaped", "vm-b": "vanished", "vm-c": "vanished"}, broken(
        "gone-as-reaped", f"gone as {gone(second)}: vm-a was reaped since it was last seen"
    )
    (timeline,) = store.timeline(vm_id("vm-a"))
    assert [(e.kind, e.what, e.change) for e in timeline.entries] == [
        ("audit", "orphan", "new"),
        ("reap", "delete", "done"),
    ]
    assert (timeline.status, timeline.gone_how) == ("gone", "reaped")
    kinds = [run.kind for run in store.runs()]
    assert kinds == ["audit", "reap", "audit"]


def _reap(name: str, event: str, when: float) -> ReapAction:
    key = observed(name).key
    return ReapAction(key, vm_id(name), name, "vm", "delete", event, "", day(when))


def test_a_resource_re_created_under_the_same_id_is_another(store: HistoryStore) -> None:
    audit(store, 0, [observed("vm-a", uid="uid-1")])
    recreated = audit(store, 1, [observed("vm-a", uid="uid-2")])
    assert changes(recreated) == {"vm-a": "new"}, broken(
        "re-created-is-another", "a re-created resource taken for the old one"
    )
    assert gone(recreated) == {"vm-a": "vanished"}, "the first incarnation went"
    unknown = audit(store, 2, [observed("vm-a", uid="")])
    assert changes(unknown) == {"vm-a": "still"}, "no unique id: the latest incarnation"
    learnt = audit(store, 3, [observed("vm-a", uid="uid-2")])
    assert changes(learnt) == {"vm-a": "still"}
    incarnations = store.timeline(vm_id("vm-a").upper())  # ARM ids: case ignored
    assert [(t.uid, len(t.entries)) for t in incarnations] == [("uid-1", 1), ("uid-2", 3)]


def test_an_audit_finishing_after_a_later_one_is_kept_and_moves_nothing_back(
    store: HistoryStore,
) -> None:
    audit(store, 0, [observed("vm-a"), observed("vm-b")])
    audit(store, 2, [observed("vm-b")])  # vm-a gone on day 2
    late = audit(store, 1, [observed("vm-a"), observed("vm-b")])  # looked on day 1
    assert late.gone == ()
    assert changes(late) == {"vm-a": "still", "vm-b": "still"}
    (a,) = store.timeline(vm_id("vm-a"))
    assert (a.status, a.last_seen) == ("gone", day(0)), "day 2's verdict stands"
    assert [e.at for e in a.entries] == [day(0), day(1)], "the late observation is kept"
    assert len(store.runs()) == 3


def test_the_same_resource_twice_in_one_audit_counts_once(store: HistoryStore) -> None:
    recorded = audit(store, 0, [observed("vm-a"), observed("vm-a")])
    assert changes(recorded) == {"vm-a": "new"}
    assert store.runs()[0].findings == 1


def test_a_resource_retagged_or_seen_by_another_scope_is_stored_as_last_seen(
    store: HistoryStore,
) -> None:
    """The columns the store's indexes cover (task id, scope, status) are written when they
    change, though a night that sees the same fleet leaves them out of its update."""
    audit(store, 0, [observed("vm-a", task_id="task-old"), observed("vm-b")])
    audit(store, 1, [observed("vm-a", task_id="task-new"), observed("vm-b")])
    offenders = {o.task_id: o.resources for o in store.offenders()}
    assert offenders.get("task-new") == 1 and "task-old" not in offenders, broken(
        "a-retagged-resource-is-stored-as-last-seen",
        f"the retagged VM is stored under its old task: {offenders}",
    )

    audit(store, 2, [observed("vm-b")], scope="staging")  # vm-b is staging's now
    assert gone(audit(store, 3, [observed("vm-a", task_id="task-new")])) == {}, (
        "a resource last seen by another scope's audit was called gone by this one"
    )


def test_runs_cost_by_month_trend_and_repeat_offenders(store: HistoryStore) -> None:
    for n in range(4):  # May 30 .. June 2, a leaking VM of the fixture task every night
        audit(
            store,
            n,
            [
                observed("vm-a", hourly=1.0),
                observed(f"vm-new-{n}", hourly=1.0),
                observed("vm-ok", "ok", task_id="task-0042", hourly=1.0),
                observed("vm-smoke", "orphan", task_id="smoke-b2", hourly=0.5),
            ],
        )
        audit(store, n + 0.5, [observed("vm-s", hourly=2.0, task_id="smoke-b2")], scope="staging")
    runs = store.runs(limit=3)
    assert [(r.scope, r.at) for r in runs] == [("staging", day(3.5)), ("nightly", day(3)),
                                               ("staging", day(2.5))]  # fmt: skip
    nightly = runs[1]
    assert (nightly.findings, nightly.new, nightly.gone, nightly.leaking) == (4, 1, 1, 3)
    assert (nightly.host, nightly.currency, nightly.acknowledged) == ("ci-runner", "USD", 0)

    months = {m.month: m for m in store.cost_by_month()}
    assert set(months) == {"2025-05", "2025-06"}
    # May 31: nightly vm-a 24 + vm-ok 24 + vm-smoke 12 (vm-new-0 vanished), staging 48.
    assert months["2025-05"].accrued == pytest.approx(24 + 24 + 12 + 48)
    assert months["2025-05"].leaked_accrued == pytest.approx(24 + 12 + 48), "vm-ok is no leak"
    assert months["2025-06"].audits == 4

    trend = {t.day: t for t in store.trend(day(0))}
    assert list(trend) == ["2025-05-30", "2025-05-31", "2025-06-01", "2025-06-02"]
    assert trend["2025-05-31"].leaking == 3 + 1, "each scope's last audit of the day, summed"
    assert trend["2025-05-31"].leaked_accrued == pytest.approx(24 + 12 + 48)

    offenders = store.offenders()
    assert [(o.task_id, o.resources) for o in offenders] == [
        ("cloud-noenv-c7", 5),  # vm-a and the four vm-new-n
        ("smoke-b2", 2),
    ], "task-0042's VM was never leaking"
    assert offenders[1].leaked_accrued == pytest.approx(3 * 12 + 3 * 48)


def test_acknowledgements_are_kept_until_revoked(store: HistoryStore) -> None:
    ack = Ack(vm_id("vm-a"), "platform-team", "demo VM", date(2025, 7, 1), "cloudguard ack")
    store.add_ack(ack, day(0))
    store.add_ack(ack, day(1))
    assert store.acks() == [ack, ack]
    assert store.revoke_ack(vm_id("vm-a").upper(), "alice", day(2)) == 2
    assert store.acks() == []
    assert store.revoke_ack(vm_id("vm-a"), "alice", day(2)) == 0


def test_identity_is_the_provider_account_and_id_not_the_name(store: HistoryStore) -> None:
    for n, account in enumerate(AWS_ACCOUNTS):
        instance = observed("vm-a", provider="aws", account=account)._replace(
            key=ResourceKey("aws", account, "i-0abc"), display_id="i-0abc"
        )
        audit(store, n, [instance], scope=account)
    assert [t.account for t in store.timeline("i-0abc")] == list(AWS_ACCOUNTS)


AWS_ACCOUNTS = ("111122223333", "444455556666")


def test_one_cloud_id_in_two_accounts_of_one_scope_is_two_resources(store: HistoryStore) -> None:
    """A steady night finds a present resource by its cloud id while no two share one, and
    checks the provider and account after: the same id in another account is another."""
    first, second = (
        observed("vm-a", provider="aws", account=account)._replace(
            key=ResourceKey("aws", account, "i-0abc"), display_id="i-0abc"
        )
        for account in AWS_ACCOUNTS
    )
    audit(store, 0, [first])
    moved = audit(store, 1, [second])  # the id in the other account only
    assert moved.findings[second.key].change == "new"
    assert [(g.account, g.how) for g in moved.gone] == [(AWS_ACCOUNTS[0], "vanished")]
    audit(store, 2, [first, second])  # both present now: one id, two resources
    both = audit(store, 3, [first, second])
    assert [both.findings[o.key].change for o in (first, second)] == ["still", "still"]
    assert [both.findings[o.key].observed_hours for o in (first, second)] == [24.0, 48.0]
    assert both.gone == ()


def test_a_night_that_sees_its_fleet_as_it_was_stores_no_row_for_it(
    store: HistoryStore, location: str
) -> None:
    """A resource seen as the previous audit of its scope left it is moved on in one write for
    all of them (its narrow row), and the store's figures are the ones the report was told."""
    fleet = [
        observed("vm-a", hourly=0.25),
        observed("vm-b", "ok"),
        observed("vm-c", billable=False),
    ]
    audit(store, 0, fleet)
    audit(store, 1, fleet)
    third = audit(store, 2, [fleet[0], observed("vm-b", "orphan"), fleet[2]])
    assert changes(third) == {"vm-a": "still", "vm-b": "still", "vm-c": "still"}
    stored = dict(
        raw_rows(location, "SELECT run_id, count(*) FROM cloudguard_observations GROUP BY run_id")
    )
    assert 2 not in stored, broken(
        "a-steady-night-stores-no-row", f"a night that saw its fleet as it was stored {stored}"
    )
    assert stored == {1: 3, 3: 1}, "the first night's three, then vm-b's verdict that changed"
    told = third.findings[fleet[0].key]
    assert (told.observed_hours, told.accrued) == (48.0, 12.0), broken(
        "steady-nights-charged-at-their-price",
        f"two nights of 24 h at 0.25 reported as {told.observed_hours} h, {told.accrued}",
    )
    assert told.previous_verdict == "orphan"
    assert third.findings[fleet[2].key].observed_hours == 0.0, "deallocated: no billable hour"

    (a,) = store.timeline(vm_id("vm-a"))
    assert [(e.change, e.hours, e.accrued) for e in a.entries] == [
        ("new", 0.0, 0.0), ("still", 24.0, 6.0), ("still", 24.0, 6.0)
    ], "every audit that saw it, each interval at its price"  # fmt: skip
    gone_a = {g.name: g for g in audit(store, 3, []).gone}["vm-a"]
    assert (a.observed_hours, a.accrued, gone_a.accrued) == (48.0, 12.0, 12.0), broken(
        "steady-nights-charged-at-their-price",
        f"the report was told 48 h, 12.00; the store holds {a.observed_hours} h, {a.accrued}",
    )
    runs = {run.id: run for run in store.runs()}
    assert [runs[n].accrued for n in (2, 3)] == [6.0 + 24 * 0.172, 6.0 + 24 * 0.172]
    assert [runs[n].leaked_accrued for n in (2, 3)] == [6.0, 6.0], "vm-b was ok on its day 1"


def test_a_verdict_that_changes_while_its_reasons_stay_is_stored_as_changed(
    store: HistoryStore, location: str
) -> None:
    """Pending one night, orphan the next once its grace lapsed: `no-controller-record` both
    nights, so only the verdict tells the nights apart. The store must keep the orphan, and
    the timeline must say when the verdict moved."""
    reasons = ("no-controller-record",)
    pending = observed("vm-p", "pending", reasons=reasons)
    orphan = observed("vm-p", "orphan", reasons=reasons)
    audit(store, 0, [pending])
    second = audit(store, 1, [orphan])
    stored = raw_rows(location, "SELECT verdict FROM cloudguard_resources")
    assert stored == [("orphan",)], broken(
        "a-verdict-change-is-stored",
        f"the resource left {stored} after a night that saw it orphan (moved on as steady)",
    )
    assert second.findings[orphan.key].previous_verdict == "pending"
    (timeline,) = store.timeline(vm_id("vm-p"))
    assert [e.what for e in timeline.entries] == ["pending", "orphan"]
    third = audit(store, 2, [orphan])
    assert third.findings[orphan.key].previous_verdict == "orphan", "steady from then on"


def test_a_timeline_lists_every_audit_that_saw_the_resource_and_only_those(
    store: HistoryStore,
) -> None:
    """The audits that stored no row for it are derived: those of its scope recorded in order
    after its last stored observation, less one that could not read it; one recorded out of
    order stores its own row and is listed once."""
    a, b = observed("vm-a", hourly=1.0), observed("vm-b", hourly=1.0)
    audit(store, 0, [a, b])
    audit(store, 1, [a, b])
    audit(store, 2, [b], complete=False)  # could not read vm-a: neither seen nor gone
    audit(store, 3, [a, b])
    audit(store, 3.5, [a], scope="staging")
    audit(store, 4, [a, b])
    audit(store, 2.5, [a, b])  # recorded late, after day 4's
    (timeline,) = store.timeline(vm_id("vm-a"))
    seen = [(e.at, e.change, e.hours) for e in timeline.entries]
    assert day(2) not in [at for at, _, _ in seen], broken(
        "an-audit-that-could-not-read-it-did-not-see-it",
        f"the incomplete audit of day 2 is listed as seeing vm-a: {seen}",
    )
    runs = [e.run_id for e in timeline.entries]
    assert len(runs) == len(set(runs)), broken(
        "each-audit-once", f"an audit is listed twice in vm-a's timeline: {seen}"
    )
    assert seen == [
        (day(0), "new", 0.0), (day(1), "still", 24.0), (day(2.5), "still", 0.0),
        (day(3), "still", 48.0), (day(3.5), "still", 12.0), (day(4), "still", 12.0),
    ]  # fmt: skip
    assert (timeline.observed_hours, timeline.accrued) == (96.0, 96.0), "its entries add up"
    (b_timeline,) = store.timeline(vm_id("vm-b"))
    assert [e.at for e in b_timeline.entries] == [day(n) for n in (0, 1, 2, 2.5, 3, 4)]


def test_an_audit_recorded_before_an_observation_is_not_taken_to_have_seen_it(
    store: HistoryStore,
) -> None:
    """An audit of the scope recorded in order before a late one moved the resource into the
    scope did not look at it there: it is not derived from the late observation."""
    audit(store, 0, [observed("vm-x")], scope="staging")
    audit(store, 1, [observed("vm-y")])  # nightly: vm-x is staging's
    audit(store, 0.5, [observed("vm-x")])  # nightly, recorded late: vm-x is nightly's now
    audit(store, 2, [observed("vm-x"), observed("vm-y")])
    (timeline,) = store.timeline(vm_id("vm-x"))
    seen = [e.at for e in timeline.entries]
    assert day(1) not in seen, broken(
        "derived-only-from-audits-recorded-after",
        f"the nightly audit of day 1, which did not see vm-x, is in its timeline: {seen}",
    )
    assert seen == [day(0), day(0.5), day(2)]
