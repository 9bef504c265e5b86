"""Negative controls: break the history store on purpose; each named test must fail at
its named check (harness: tests/cloudguard_mutants.py).

Each promise of the store (what "gone" means, identity across re-creation, the
price of the day, a run recorded whole and not lost beside another, a damaged
file never replaced) has a mutant that breaks it and the tests that catch it.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

STORE = "tests/history/test_history_store.py"
CONCURRENCY = "tests/history/test_history_concurrency.py"
FILE = "tests/history/test_history_sqlite_file.py"
MIGRATION = "tests/history/test_history_migration.py"
ACKS = "tests/acknowledgements/test_acknowledgements.py"


def both(test: str) -> tuple[str, ...]:
    return tuple(f"{test}[{backend}]" for backend in ("sqlite", "postgresql"))


MUTATIONS = [
    Mutation(
        name="a resource seen changed is moved on as if seen as it was",
        module="history/recording.py",
        original="        if not same:\n",
        broken="        if False:\n",
        tests=both(
            f"{STORE}::test_a_resource_retagged_or_seen_by_another_scope_is_stored_as_last_seen"
        ),
        check="a-retagged-resource-is-stored-as-last-seen",
    ),
    Mutation(
        name="an incomplete audit calls what it did not see gone",
        module="history/recording.py",
        original="    if not run.complete:\n        return []\n",
        broken="",
        tests=both(f"{STORE}::test_an_incomplete_audit_calls_nothing_gone"),
        check="an-incomplete-audit-calls-nothing-gone",
    ),
    Mutation(
        name="an audit of another scope calls gone what it was not asked to look at",
        module="history/store.py",
        original='"WHERE r.last_scope = ? AND r.status = ? AND s.last_run <> ? '
        'AND s.last_seen < ?",\n            (scope, PRESENT, run_id, at),',
        broken='"WHERE r.status = ? AND s.last_run <> ? AND s.last_seen < ?",\n'
        "            (PRESENT, run_id, at),",
        tests=both(f"{STORE}::test_only_an_audit_of_the_same_scope_calls_a_resource_gone"),
        check="another-scope-calls-nothing-gone",
    ),
    Mutation(
        name="a resource re-created under the same id taken for the one deleted",
        module="history/recording.py",
        original="    return not (stored_uid and observed_uid and stored_uid != observed_uid)",
        broken="    return True",
        tests=both(f"{STORE}::test_a_resource_re_created_under_the_same_id_is_another"),
        check="re-created-is-another",
    ),
    Mutation(
        name="an interval priced at the next audit's price, not its own day's",
        module="history/recording.py",
        # (in the moved resource's interval, _observe's: a steady one's price is unchanged)
        original="stored.hourly, stored.last_seen, at)\n        interval_leaking",
        broken="observation.hourly, stored.last_seen, at)\n        interval_leaking",
        tests=both(f"{STORE}::test_cost_accrues_between_audits_at_the_price_of_the_day"),
        check="priced-at-the-days-price",
    ),
    Mutation(
        name="a reap that acted on a resource forgotten when it goes",
        module="history/recording.py",
        original="resource.gone_how = REAPED if reaped else VANISHED",
        broken="resource.gone_how = VANISHED",
        tests=both(f"{STORE}::test_a_reaped_resource_is_gone_as_reaped_the_others_as_vanished"),
        check="gone-as-reaped",
    ),
    Mutation(
        name="a run's id taken before the write lock",
        module="history/store.py",
        original="        with db.guarded(), db.write():\n"
        '            run_id = self._next_id("cloudguard_runs")\n'
        "            previous_at = db.value(",
        broken='        run_id = self._next_id("cloudguard_runs")\n'
        "        with db.guarded(), db.write():\n"
        "            previous_at = db.value(",
        tests=both(f"{CONCURRENCY}::test_two_audits_at_once_are_both_recorded_one_after_the_other"),
        check="both-audits-recorded",
    ),
    Mutation(
        name="a run's observations written in a transaction of their own",
        module="history/store.py",
        original='            db.insert_many("cloudguard_observations", OBSERVATION_COLUMNS, '
        "write.observations)\n",
        broken="        with db.guarded(), db.write():\n"
        '            db.insert_many("cloudguard_observations", OBSERVATION_COLUMNS, '
        "write.observations)\n",
        tests=both(f"{CONCURRENCY}::test_an_audit_killed_mid_write_leaves_the_store_as_it_was"),
        check="a-killed-audit-leaves-no-trace",
    ),
    Mutation(
        name="a file SQLite cannot read replaced by a fresh history",
        module="history/sqlite.py",
        original="        except HistoryError:\n"
        "            self._connection.close()\n"
        "            raise",
        broken="        except HistoryError:\n            self._connection.close()\n"
        "            path.unlink()\n"
        "            self.__init__(path, busy_timeout=busy_timeout)  # type: ignore[misc]\n"
        "            return",
        tests=(f"{FILE}::test_a_file_that_is_no_database_is_refused_naming_it_and_left_alone",),
        check="a-damaged-file-is-refused",
    ),
    Mutation(
        name="a store of a newer schema used as if it were this one's",
        module="history/schema.py",
        original="            if found > CURRENT:",
        broken="            if False:",
        tests=both(f"{MIGRATION}::test_a_store_of_a_newer_cloudguard_is_refused"),
        check="a-newer-store-refused",
    ),
    Mutation(
        name="acknowledgements matched case-sensitively on every cloud",
        module="acknowledgements.py",
        original="            (self._folded, resource_id.casefold())\n"
        "            if case_insensitive",
        broken="            (self._folded, resource_id.casefold())\n            if False",
        tests=(f"{ACKS}::test_a_finding_is_matched_as_its_cloud_compares_ids",),
        check="arm-ids-matched-case-insensitively",
    ),
    Mutation(
        name="a new store's switch to write-ahead logging is not asked again while busy",
        module="history/sqlite.py",
        original="                if not busy or time.monotonic() >= deadline:\n",
        broken="                if True:\n",
        tests=(
            f"{FILE}::test_a_new_store_another_connection_is_writing_is_opened_once_the_write_ends",
        ),
        check="new-store-waits-for-the-lock",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_history_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
