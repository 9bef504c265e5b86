"""docs/proof.md, made from the negative controls themselves: promise -> test -> control.

    .venv/bin/python tests/docs/proof_page.py > docs/proof.md

Every control module is listed here with the page whose promises it breaks;
tests/docs/test_proof_page.py requires the page to be what this renders and
every module holding controls to be listed, so the page cannot fall behind.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]  # the harness, when run as a script

from cloudguard_mutants import Mutation  # noqa: E402

# (page, its section) -> the control modules that break its promises, in the page's order.
SECTIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("guard.md", "The guard: seal, refusers, reach log, record keeper"): (
        "tests/guard/test_negative_controls.py",
        "tests/guard/test_delivery_controls.py",
        "tests/guard/test_late_import_controls.py",
    ),
    (
        "guard.md#ambient-roots-and-tracked-files-left-as-they-were",
        "Ambient roots and tracked files",
    ): ("tests/guard/test_writes_negative_controls.py",),
    ("guard.md#the-hard-seal-cloudguard-run-hard", "The hard seal"): (
        "tests/hard/test_hard_negative_controls.py",
        "tests/hard/test_hard_confinement_controls.py",
    ),
    ("pytest.md", "The pytest plugin and the in-process guards"): (
        "tests/pytest_plugin/test_plugin_negative_controls.py",
        "tests/pytest_plugin/test_inprocess_guard_controls.py",
        "tests/pytest_plugin/test_google_guard_controls.py",
        "tests/pytest_plugin/test_plugin_truth_mutants.py",
        "tests/pytest_plugin/test_plugin_mutants.py",
        "tests/guard/test_first_hour_controls.py",
    ),
    ("reference.md#what-cloudguard-trusts", "What cloudguard trusts"): (
        "tests/cli/test_trust_negative_controls.py",
        "tests/cloud/test_endpoint_rule_controls.py",
    ),
    ("audit.md", "The audit"): (
        "tests/audit/test_audit_negative_controls.py",
        "tests/audit/test_audit_owned_negative_controls.py",
        "tests/audit/test_third_cloud_controls.py",
        "tests/audit/test_audit_kinds_controls.py",
        "tests/audit/test_audit_first_hour_controls.py",
        "tests/cli/test_startup_imports_controls.py",
    ),
    ("history.md", "History, acknowledgements and notifications"): (
        "tests/history/test_history_negative_controls.py",
        "tests/history/test_history_steady_controls.py",
        "tests/audit/test_audit_history_controls.py",
        "tests/notify/test_notify_negative_controls.py",
    ),
    ("reap.md", "Reap"): (
        "tests/reap/test_reap_negative_controls.py",
        "adapters/azure/tests/test_azure_reap_groups_controls.py",
        "adapters/azure/tests/test_azure_reap_every_request_controls.py",
        "adapters/azure/tests/test_azure_reap_every_request_members_controls.py",
        "adapters/aws/tests/test_aws_reap_every_request_controls.py",
        "adapters/aws/tests/test_aws_reap_holders_controls.py",
    ),
    ("azure.md", "Azure"): (
        "adapters/azure/tests/test_azure_resource_graph_controls.py",
        "adapters/azure/tests/test_azure_throttling_controls.py",
        "adapters/azure/tests/test_azure_prices_controls.py",
        "adapters/azure/tests/test_azure_demo_controls.py",
    ),
    ("aws.md", "AWS"): (
        "adapters/aws/tests/test_aws_organizations_controls.py",
        "adapters/aws/tests/test_aws_endpoint_controls.py",
    ),
    ("gcp.md", "Google Cloud"): (
        "adapters/gcp/tests/test_gcp_controls.py",
        "adapters/gcp/tests/test_gcp_live_controls.py",
        "adapters/gcp/tests/test_gcp_prices_controls.py",
        "adapters/gcp/tests/test_gcp_reaper_controls.py",
    ),
    ("architecture.md", "Architecture: the import graph"): (
        "tests/architecture/test_import_graph_controls.py",
    ),
}

HEAD = """\
# Proof: every promise, its test, its control

Each row below is one promise of the page it is filed under, **broken on
purpose** in a copy of the package (the *control* column says how). The named
test must fail at the named *check* (a check the test states with
`broken("name", ...)`, tests/named_checks.py), and the same test must pass on
the unbroken code in the same run. The harness (`tests/cloudguard_mutants.py`)
knows a check failed by a marker the failing check itself draws at random: not
a word of the test's source, not the program's output the test quotes. A test
that goes red for another reason (a crash, a timeout, another check) fails its
control, and so does one that stays green.

Two controls of the harness itself (`tests/harness/`) feed it mutants that turn
a test red for the wrong reason, and require it to refuse them: the hard seal
failing to start (75) offered as "the sink records nothing", and every apply's
exit code forced to 1 offered as "attachment not re-checked" (the test's output,
quoted in its failure, says "attached").

This page is made from the controls themselves
(`.venv/bin/python tests/docs/proof_page.py > docs/proof.md`; a test keeps it
current).

## Adding a control

A test names the check that proves its promise, at that check; a refusal
expected as an exception names itself with `raises_at`:

    assert sent == 1, broken("sent-once", f"DELETE sent {sent} times")
    with raises_at("a-newer-store-refused", HistoryTooNew, "a v99 store was opened"):
        open_store(location)

A module of controls lists its mutants as `MUTATIONS`, each naming the check
its tests must fail at, and hands each to the harness with its siblings (whose
tests share one run on the unbroken code):

    MUTATIONS = [
        Mutation(name="an action re-sent by the retry policy", module="reap/apply.py",
                 original="...", broken="...", tests=("tests/...::test_x",),
                 check="sent-once"),
    ]

    @pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
    def test_breaking_it_turns_its_tests_red(tmp_path_factory, mutation):
        assert_turns_red(tmp_path_factory, mutation, MUTATIONS)

`check` may be a tuple (every one of them) or a mapping of test to check;
`package=` mutates an adapter's package instead of the core, and `also=` adds
further edits of the same promise. A mutant that does not compile is refused
before it runs. List the module in `tests/docs/proof_page.py` and make this
page again.

{counts}

## What the suite needs from its host

Nothing is probed to decide a skip. A tool a test needs (headless Chromium,
a C compiler that links statically, `iproute2`, `setpriv`) is installed by
`python3 dev.py test`; missing, the test fails naming it, unless the host
declares the lack by name: `TESTS_HOST_LACKS=chromium,static-c,second-uid`
(and `HARD_SEAL_TESTS_HOST_LACKS` for the hard seal's namespaces). An owner
check (another user's file is refused) is met by a second user, uid 65534,
whatever user runs the suite: only root can switch to it, so an ordinary
user's run fails those tests unless it declares `second-uid`. Races are forced
by a barrier (the fake ARM holds an action in flight), and a wait is proven by
the fake server's log of when each request arrived, never by the test's clock.
"""


def controls(module: str) -> list[Mutation]:
    path = ROOT / module
    if str(path.parent) not in sys.path:  # its helpers, as pytest's import mode finds them
        sys.path.append(str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return list(loaded.MUTATIONS)


def row(mutation: Mutation) -> str:
    """One control: its tests, each with its checks, one per line of the cell."""
    tests = "<br>".join(f"`{_cell(test.replace('::', ' :: '))}`" for test in mutation.tests)
    checks = "<br>".join(
        ", ".join(f"`{_cell(check)}`" for check in mutation.checks_of(test))
        for test in mutation.tests
    )
    return f"| {_cell(mutation.name)} | {tests} | {checks} |"


def counts(every: list[Mutation]) -> str:
    return f"This page lists {len(every)} controls, each judged at a named check."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    loaded = {module: controls(module) for modules in SECTIONS.values() for module in modules}
    out = [HEAD.replace("{counts}", counts([m for ms in loaded.values() for m in ms]))]
    for (page, heading), modules in SECTIONS.items():
        out += [f"## {heading}", "", f"Promises of [{page.partition('#')[0]}]({page}).", ""]
        out += ["| control (the promise, broken) | test | check |", "|---|---|---|"]
        for module in modules:
            out += [row(mutation) for mutation in loaded[module]]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
