"""Negative controls for the live Google Cloud sweep: break it in a copy of cloudguard_gcp; each
named test must fail at its named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import cloudguard_gcp
import pytest
from cloudguard_mutants import GCP_SDKS, Mutation, assert_turns_red

GCP = Path(cloudguard_gcp.__file__).resolve().parent
LIVE = "adapters/gcp/tests/test_gcp_live.py::"
FAILS = LIVE + "test_a_read_that_fails_is_did_not_run_and_nothing_of_it_is_reported"
CREDENTIALS = (
    "adapters/gcp/tests/test_gcp_live_credentials.py::"
    "test_a_real_identity_is_never_sent_to_a_loopback_endpoint"
)

MUTATIONS = [
    Mutation(
        name="the asset search reads its first page only",
        module="asset_search.py",
        original="        token = page.next_page_token\n",
        broken='        token = ""\n',
        tests=(LIVE + "test_every_page_of_a_folder_is_read_at_500_a_page",),
        check="every-page-read",
        package=GCP,
    ),
    Mutation(
        name="the asset search asks for the server's default page (100), not 500",
        module="asset_search.py",
        original="PAGE_SIZE = 500 ",
        broken="PAGE_SIZE = 100 ",
        tests=(LIVE + "test_every_page_of_a_folder_is_read_at_500_a_page",),
        check="every-page-read",
        package=GCP,
    ),
    Mutation(
        name="the one endpoint rule is not asked: a real identity goes to a loopback endpoint",
        module="credentials.py",
        original="        fake = credential_for(\n"
        "            ENDPOINTS, endpoint, name if not key_file else describe(name, key_file)\n"
        "        )\n",
        broken="        fake = key == FAKE\n",
        tests=(f"{CREDENTIALS}[application-default]", f"{CREDENTIALS}[key-file]"),
        check="real-identity-not-sent-to-loopback",
        package=GCP,
    ),
    Mutation(
        name="a scope whose search fails is reported as an empty scope (clean)",
        module="live.py",
        original='(SourceFailure(f"gcp scope {scope}", _reason(exc, "searchAllResources")),)',
        broken="()",
        tests=(
            f"{FAILS}[scope-denied-403]",
            f"{FAILS}[second-page-500]",
            f"{FAILS}[throttled-429]",
        ),
        check="failed-read-did-not-run",
        package=GCP,
    ),
    Mutation(
        name="a project whose Compute listing fails is reported from the search alone",
        module="live.py",
        original="        if result.failures:\n",
        broken="        if False:\n",
        tests=(
            f"{FAILS}[compute-denied-403]",
            f"{FAILS}[compute-503]",
            f"{FAILS}[zone-unreachable]",
        ),
        check="failed-read-did-not-run",
        package=GCP,
    ),
    Mutation(
        name="an aggregated list's unreachable zones are ignored",
        module="compute_state.py",
        original="        elif page.unreachables:",
        broken="        elif False:",
        tests=(f"{FAILS}[zone-unreachable]",),
        check="failed-read-did-not-run",
        package=GCP,
    ),
    Mutation(
        name="instances are not listed: the asset index's (lagging) state is taken",
        module="compute_state.py",
        original='    kinds.VM: "instances",\n',
        broken="",
        tests=(LIVE + "test_compute_state_decides_power_attachment_and_use",),
        check="instance-status-from-compute",
        package=GCP,
    ),
    Mutation(
        name="snapshots are not listed: no id, bytes or place of theirs is read",
        module="compute_state.py",
        original='    kinds.SNAPSHOT: "snapshots",\n',
        broken="",
        tests=(LIVE + "test_snapshots_global_addresses_and_regional_disks_are_read_from_compute",),
        check="global-listings-read",
        package=GCP,
    ),
    Mutation(
        name="a global address is looked for in the regional listing",
        module="compute_state.py",
        original='        return "globalAddresses"\n',
        broken='        return "addresses"\n',
        tests=(LIVE + "test_snapshots_global_addresses_and_regional_disks_are_read_from_compute",),
        check="global-listings-read",
        package=GCP,
    ),
    Mutation(
        name="a disk's users are ignored (every disk attached to nothing)",
        module="compute_state.py",
        original="    users = [last_segment(user) for user in item.users]\n    attached =",
        broken="    users: list[str] = []\n    attached =",
        tests=(LIVE + "test_compute_state_decides_power_attachment_and_use",),
        check="disk-users-read",
        package=GCP,
    ),
    Mutation(
        name="an address's status is ignored (every address reserved)",
        module="compute_state.py",
        original='    state = item.status.lower().replace("_", " ")\n',
        broken='    state = "reserved"\n',
        tests=(LIVE + "test_compute_state_decides_power_attachment_and_use",),
        check="address-status-read",
        package=GCP,
    ),
    Mutation(
        name="throttling is never retried",
        module="clients.py",
        original="            for _ in range(retries):\n",
        broken="            for _ in range(0):\n",
        tests=(LIVE + "test_throttling_once_is_retried_and_the_scope_read_whole",),
        check="transient-retried",
        package=GCP,
    ),
    Mutation(
        name="a 429's Retry-After is ignored: the page is asked again after the backoff alone",
        module="clients.py",
        original="    return min(BACKOFF_MAX, max(backoff, retry_after(exc)))\n",
        broken="    return min(BACKOFF_MAX, backoff)\n",
        tests=(LIVE + "test_a_throttled_page_waits_what_retry_after_asks",),
        check="retry-after-obeyed",
        package=GCP,
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_live_gcp_sweep_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS, GCP_SDKS)
