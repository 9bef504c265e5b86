"""Negative controls: break the history's cheap night and its migration lock on purpose; each
named test must fail at its named check (harness: tests/cloudguard_mutants.py).

A night that sees its fleet as it was stores no row for it and moves it on in one
write of narrow rows; its timeline derives the audits that stored nothing; two first uses at
once migrate the store once. Each of those promises has a mutant that breaks it
alone, and the test that catches it.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

STORE = "tests/history/test_history_store.py"
MIGRATION = "tests/history/test_history_migration.py"


def both(test: str, *variants: str) -> tuple[str, ...]:
    return tuple(
        f"{test}[{'-'.join((backend, *variants))}]" for backend in ("sqlite", "postgresql")
    )


MUTATIONS = [
    Mutation(
        name="the schema version not read again under the write lock",
        module="history/schema.py",
        original="            found = _version(database)  # again, under the lock: another may "
        "have migrated\n",
        broken="",
        tests=both(f"{MIGRATION}::test_two_first_uses_at_once_migrate_the_store_once", "new")
        + both(f"{MIGRATION}::test_two_first_uses_at_once_migrate_the_store_once", "version-2"),
        check="migrated-once",
    ),
    Mutation(
        name="every observation stored, as if each had changed something",
        module="history/recording.py",
        original="        same = (\n            seen_uid in",
        broken="        same = False and (\n            seen_uid in",
        tests=both(f"{STORE}::test_a_night_that_sees_its_fleet_as_it_was_stores_no_row_for_it"),
        check="a-steady-night-stores-no-row",
    ),
    Mutation(
        name="a verdict that changed while its reasons stayed moved on as steady",
        module="history/recording.py",
        original="            and verdict == seen_verdict\n",
        broken="            and verdict == verdict\n",
        tests=both(
            f"{STORE}::test_a_verdict_that_changes_while_its_reasons_stay_is_stored_as_changed"
        ),
        check="a-verdict-change-is-stored",
    ),
    Mutation(
        name="a night seen as it was charged its hours at no price in the store",
        module="history/recording.py",
        original="            at, run_id, observed_hours, resource_accrued,\n",
        broken="            at, run_id, observed_hours, was_accrued,\n",
        tests=both(f"{STORE}::test_a_night_that_sees_its_fleet_as_it_was_stores_no_row_for_it"),
        check="steady-nights-charged-at-their-price",
    ),
    Mutation(
        name="what an incomplete audit could not read taken as seen",
        module="history/store.py",
        original="            if implied and not run.complete:",
        broken="            if False:",
        tests=both(
            f"{STORE}::test_a_timeline_lists_every_audit_that_saw_the_resource_and_only_those"
        ),
        check="an-audit-that-could-not-read-it-did-not-see-it",
    ),
    Mutation(
        name="an audit recorded out of order taken to have seen what it did not store",
        module="history/store.py",
        original="            implied = latest_audit is None or at > latest_audit\n",
        broken="            implied = True\n",
        tests=both(
            f"{STORE}::test_a_timeline_lists_every_audit_that_saw_the_resource_and_only_those"
        ),
        check="each-audit-once",
    ),
    Mutation(
        name="an observation's state taken back to audits recorded before it",
        module="history/store.py",
        original='"AND id > ? AND at > ? AND at <= ? AND id NOT IN "',
        broken='"AND id > 0 * ? AND at > ? AND at <= ? AND id NOT IN "',
        tests=both(
            f"{STORE}::test_an_audit_recorded_before_an_observation_is_not_taken_to_have_seen_it"
        ),
        check="derived-only-from-audits-recorded-after",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_steady_night_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
