"""The harness's legacy mode (controls not yet converted, `reason=`) judges as the earlier
harness did: red, with each reason in the test's own failure lines, never in its source."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, Verdict, judge
from named_checks import raised_lines

TEST = "tests/x/test_y.py::test_z"
LEGACY = Mutation(
    name="a promise broken", module="m.py", original="a", broken="b", tests=(TEST,),
    reason="the promise was broken",
)  # fmt: skip
FAILURE = """\
    def test_z():
>       assert kept, "the promise was broken"
E       AssertionError: the promise was broken
E       assert False
"""


def test_a_legacy_control_passes_when_its_reason_is_in_the_failure_lines() -> None:
    judge(LEGACY, {TEST: Verdict("failed", (), "", raised_lines(FAILURE))})


def test_a_legacy_control_is_refused_when_the_reason_is_only_in_the_echoed_source() -> None:
    echoed = FAILURE.replace("E       AssertionError: the promise was broken\n", "")
    with pytest.raises(AssertionError, match="went red for another reason"):
        judge(LEGACY, {TEST: Verdict("failed", (), "", raised_lines(echoed))})
    with pytest.raises(AssertionError, match="stayed green"):
        judge(LEGACY, {TEST: Verdict("passed", (), "", "")})


def test_a_mutation_names_one_way_to_judge_it_and_a_mapping_names_its_tests() -> None:
    with pytest.raises(AssertionError, match="one of them"):
        Mutation(name="both", module="m.py", original="a", broken="b", tests=(TEST,),
                 check="a-check", reason="words")  # fmt: skip
    with pytest.raises(AssertionError, match="does not name exactly its tests"):
        Mutation(name="short", module="m.py", original="a", broken="b", tests=(TEST, "t::u"),
                 check={TEST: "a-check"})  # fmt: skip
