"""Records that say where a reach was made: the phase, the fixture or class setup, the test's line.

A reach in a class's setup is made while pytest sets up the first test of the
class, and one in a shared fixture while the first test that asks for it does:
the record names that test, and now also says `setup` and
`ClassSetupTest.setUpClass`, so nobody reads it as the test's own. A reach at
import is `collection`, with the file. The names the suite declared itself
(pytest-env) are its fakes, never "identity variables still set"; one the
test sets after the seal is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inner_runs import INNER, run_inner
from named_checks import broken

from cloudguard import exit_codes
from cloudguard.documents import reach_log

SUITE = "test_whereabouts.py"
INI = """
[pytest]
env =
    AZURE_SUBSCRIPTION_ID=00000000-0000-0000-0000-0000000000aa
"""


def line_of(text: str) -> int:
    """The 1-based line of `text` in the inner suite."""
    lines = (INNER / "whereabouts.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def at(test: str) -> str:
    return f"{SUITE}:{line_of(f'def {test}(')}"


def by_host(log: Path) -> dict[str, dict[str, object]]:
    from cloudguard_schemas import validate_lines

    validate_lines("reach-log", log)
    found = {}
    for record in reach_log.read(str(log)).reaches:
        if record["via"] == "az-shim":
            continue  # the shim's target is the command, not a host
        host = str(record["target"]).split(":")[0]
        assert host not in found, f"{host} recorded twice"
        found[host] = dict(record)
    return found


def whereabouts(record: dict[str, object]) -> tuple[object, ...]:
    return tuple(record.get(key) for key in ("test", "phase", "fixture", "location"))


def differences(
    said: dict[str, tuple[object, ...]], expected: dict[str, tuple[object, ...]], *fields: int
) -> dict[str, dict[str, object]]:
    """Each host whose record and expectation differ in `fields` (indexes of `whereabouts`)."""

    def picked(where: tuple[object, ...] | None) -> tuple[object, ...] | None:
        return None if where is None else tuple(where[field] for field in fields)

    return {
        host: {"said": said.get(host), "expected": expected.get(host)}
        for host in expected.keys() | said.keys()
        if picked(said.get(host)) != picked(expected.get(host))
    }


def test_each_record_names_its_phase_its_fixture_and_its_tests_line(fenced):
    fenced.makeini(INI)
    log = fenced.path / "reach.jsonl"

    run = run_inner(fenced, "whereabouts", "--cloudguard", f"--cloudguard-log={log}")

    records = by_host(log)
    node = f"{SUITE}::"
    expected = {
        "collection.amazonaws.com": ("", "collection", None, SUITE),
        "setup-class.management.azure.com": (
            f"{node}ClassSetupTest::test_first", "setup", "ClassSetupTest.setUpClass",
            at("test_first"),
        ),
        "teardown-class.management.azure.com": (
            f"{node}ClassSetupTest::test_second", "teardown", "ClassSetupTest.tearDownClass",
            at("test_second"),
        ),
        "setup-xunit.amazonaws.com": (
            f"{node}TestXunit::test_in_xunit_class", "setup", "TestXunit.setup_class",
            at("test_in_xunit_class"),
        ),
        "module-fixture-setup.amazonaws.com": (
            f"{node}test_uses_shared", "setup", "shared (module scope)", at("test_uses_shared"),
        ),
        "module-fixture-teardown.amazonaws.com": (
            f"{node}test_last", "teardown", "shared (module scope)", at("test_last"),
        ),
        "call.amazonaws.com": (f"{node}test_own_reach", "call", None, at("test_own_reach")),
        "identity.management.azure.com": (
            f"{node}test_identity_vars_name_only_what_leaked", "call", None,
            at("test_identity_vars_name_only_what_leaked"),
        ),
        "raised.management.azure.com": (
            f"{node}ReraisedTest::test_a", "setup", "ReraisedTest.setUpClass", at("test_a"),
        ),
    }  # fmt: skip
    said = {host: whereabouts(record) for host, record in records.items()}
    wrong = differences(said, expected, 0, 1, 3)  # its test, phase and line
    assert not wrong, broken(
        "a-record-says-where-it-was-made", f"a record does not say where it was made: {wrong}"
    )
    wrong = differences(said, expected, 2)  # the fixture or class setup that made it
    assert not wrong, broken("a-record-names-its-fixture", f"a record names no fixture: {wrong}")
    # The fixture's own subprocess (the refusing `az` shim) says the fixture too.
    clis = [whereabouts(r) for r in reach_log.read(str(log)).reaches if r["via"] == "az-shim"]
    assert clis == [
        (f"{node}test_uses_cli", "setup", "cli", at("test_uses_cli")),
        (f"{node}test_identity_vars_name_only_what_leaked", "call", None,
         at("test_identity_vars_name_only_what_leaked")),
    ], f"a fixture's subprocess does not say where it was made: {clis}"  # fmt: skip
    assert run.result.ret == exit_codes.REACH_REFUSED

    # The failures say it as the records do.
    first = run.verdicts["test_first"].text
    assert "during setup, in ClassSetupTest.setUpClass" in first, first
    assert "during teardown, in ClassSetupTest.tearDownClass" in run.verdicts["test_second"].text
    assert "during collection of test_whereabouts.py" in run.output
    # test_b failed on the refusal pytest raised again: named, and recorded for test_a.
    again = run.verdicts["test_b"].text
    assert f"refused and recorded for {node}ReraisedTest::test_a" in again, again
    assert "during setup, in ReraisedTest.setUpClass" in again


def test_identity_variables_are_what_leaked_not_the_suites_own_fakes(fenced):
    fenced.makeini(INI)
    log = fenced.path / "reach.jsonl"

    run_inner(
        fenced, "whereabouts", "--cloudguard", f"--cloudguard-log={log}",
        "-k", "identity_vars",
    )  # fmt: skip

    named = {str(r["via"]): r["identity_vars"] for r in reach_log.read(str(log)).reaches}
    listed = {name for names in named.values() for name in names}
    assert "AZURE_SUBSCRIPTION_ID" not in listed, broken(
        "the-suites-own-fakes-are-no-identity", f"the suite's own fake was listed: {named}"
    )
    assert "AZURE_CORE_NO_COLOR" not in listed, broken(
        "azs-colour-switch-is-no-identity", f"az's colour switch was listed: {named}"
    )
    assert named == {
        # The test set AZURE_CLIENT_SECRET after the seal: it leaked. AZURE_SUBSCRIPTION_ID is
        # the suite's (kept), AZURE_CORE_NO_COLOR az's colour switch, the AWS sentinels
        # the seal's own: none of them.
        "az-shim": ["AZURE_CLIENT_SECRET"],
        "socket": ["AZURE_CLIENT_SECRET"],
    }, f"identity variables still set, as recorded: {named}"


@pytest.mark.parametrize("mode", [("-n", "2")], ids=["xdist"])
def test_workers_records_say_where_too(fenced, mode):
    fenced.makeini(INI)
    log = fenced.path / "reach.jsonl"

    run_inner(fenced, "whereabouts", "--cloudguard", f"--cloudguard-log={log}", *mode)

    for record in reach_log.read(str(log)).reaches:
        host = str(record["target"]).split(":")[0]
        if host.startswith("setup-class"):
            assert whereabouts(record)[1:3] == ("setup", "ClassSetupTest.setUpClass"), record
        elif record["via"] == "az-shim" and "test_uses_cli" in str(record["test"]):
            assert whereabouts(record) == (
                f"{SUITE}::test_uses_cli",
                "setup",
                "cli",
                at("test_uses_cli"),
            ), record
        elif record["test"]:
            assert record.get("phase") in ("setup", "call", "teardown"), record
        else:
            assert whereabouts(record)[1:] == ("collection", None, SUITE), record
