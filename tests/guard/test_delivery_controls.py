"""Negative controls: a refusal reaches the verdict from any namespace the command made
(harness: tests/cloudguard_mutants.py).

Each control breaks one way a refuser's record reaches the run's keeper (the
channel's path for another network namespace, the mark for a refuser that
reaches no channel, the watch on the keeper's socket, the nested run's look
at its ancestors and, inside the hard seal, at what the supervisor tells it
and its refusal of a squat of that name, a nested keeper inside the seal
that sweeps (the gate records each connect of its sweep as a reach), the
keeper's and the hard seal's refusal of a malformed message, the hard seal's
gate letting a refuser reach the keeper's path) and requires its tests in
tests/guard/test_verdict_integrity.py (the squat: tests/guard/test_refusers.py)
to fail at their named check.

`unshare -rpf` alone (a pid namespace, the keeper's network namespace) is
delivered on the abstract name as any refusal is; what breaks that breaks
every refusal (tests/guard/test_negative_controls.py, "the keeper keeps
nothing").
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

INTEGRITY = "tests/guard/test_verdict_integrity.py::"
NAMESPACE = f"{INTEGRITY}test_a_refusal_from_a_namespace_of_the_commands_own_makes_the_run_red"
UNDER_HARD = f"{INTEGRITY}test_under_hard_a_refusal_from_a_namespace_of_the_commands_own_is_named"
MALFORMED = f"{INTEGRITY}test_a_malformed_message_on_the_keepers_channel_is_tampering"
INSIDE_HARD = "test_inside_hard_a_nested_run_without_the_keeper_variable_reaches_the_outer_verdict"

MALFORMED_TAMPERING = (
    '            self.tamper("a malformed message arrived on the record keeper\'s channel")\n'
)

MUTATIONS = [
    Mutation(
        name="a refuser tries only the keeper's abstract name",
        module="guard/reach.py",
        original='    if problem is not None and address.startswith("/") and problem[1]:\n',
        broken="    if False:\n",
        tests=(f"{NAMESPACE}[-rn]", f"{NAMESPACE}[-rnpf]", f"{NAMESPACE}[-rnpf --mount-proc]"),
        check="a-refusal-from-another-namespace-is-red",
    ),
    Mutation(
        name="the hard seal's gate refuses the keeper's path",
        module="guard/hard/supervisor.py",
        original="frozenset(setup.allow_unix.values()) | _keeper_sockets(job.keepers),",
        broken="frozenset(setup.allow_unix.values()),",
        tests=(f"{UNDER_HARD}[-rn]", f"{UNDER_HARD}[-rnpf]"),
        check="the-refusal-is-named",
    ),
    Mutation(
        name="a refuser that reaches no channel leaves no mark",
        module="guard/reach.py",
        original="            mark = posix.open(address + MARK_SUFFIX, _MARK_FLAGS)\n",
        broken="            mark = -1\n",
        tests=(f"{INTEGRITY}test_a_refusal_that_reaches_no_channel_leaves_its_mark",),
        check="an-undelivered-refusal-is-red",
    ),
    Mutation(
        name="the keeper does not watch its socket",
        module="guard/rendezvous.py",
        original="SOCKET_EVENTS = IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF\n",
        broken="SOCKET_EVENTS = IN_MOVE_SELF\n",
        tests=(f"{INTEGRITY}test_removing_the_keepers_channel_socket_is_tampering",),
        check="a-removed-channel-is-named",
    ),
    Mutation(
        name="a nested run does not look for the runs it is inside",
        module="guard/session.py",
        original="            if signalled:  # a run inside runs",
        broken="            if False:  # a run inside runs",
        tests=(
            f"{INTEGRITY}"
            "test_a_nested_run_without_the_keeper_variable_still_reaches_the_outer_verdict",
        ),
        check="a-nested-reach-reaches-the-outer-verdict",
    ),
    Mutation(
        name="a nested run does not ask the hard seal it is inside for its keepers",
        module="guard/keeper.py",
        original=(
            "            dict.fromkeys((*rendezvous.enclosing(reach.pid_namespace()), "
            "*self._around_seal))\n"
        ),
        broken="            dict.fromkeys(rendezvous.enclosing(reach.pid_namespace()))\n",
        tests=(f"{INTEGRITY}{INSIDE_HARD}",),
        check="a-nested-reach-reaches-the-outer-verdict",
    ),
    Mutation(
        name="the hard seal tells a nested run no keepers",
        module="guard/hard/supervisor.py",
        original='            told=" ".join(job.keepers).encode("utf-8", "surrogateescape"),\n',
        broken="",
        tests=(f"{INTEGRITY}{INSIDE_HARD}",),
        check="a-nested-reach-reaches-the-outer-verdict",
    ),
    Mutation(
        name="a nested run takes a squat of the seal's name for the seal",
        module="guard/rendezvous.py",
        original="        if pid != 0:\n",
        broken="        if False:\n",
        tests=(
            "tests/guard/test_refusers.py::"
            "test_a_seal_keepers_name_told_by_a_process_the_caller_can_see_is_tampering",
        ),
        check="a-squatted-seal-name-is-tampering",
    ),
    Mutation(
        name="a keeper inside the hard seal sweeps the per-uid directory",
        module="guard/keeper.py",
        original="            if not self._around_seal:  # inside a seal",
        broken="            if True:  # inside a seal",
        tests=(
            f"{INTEGRITY}test_inside_hard_a_nested_runs_keeper_connects_to_no_other_keepers_socket",
        ),
        check="a-nested-keeper-connects-to-no-other-keeper",
    ),
    Mutation(
        name="the keeper drops a malformed message silently",
        module="guard/keeper.py",
        original=MALFORMED_TAMPERING,
        broken="            pass\n",
        tests=(f"{MALFORMED}[abstract-False]", f"{MALFORMED}[path-False]"),
        check="a-malformed-message-is-tampering",
    ),
    Mutation(
        name="the hard seal drops a malformed message silently",
        module="guard/hard/relay.py",
        original=MALFORMED_TAMPERING,
        broken="            pass\n",
        tests=(f"{MALFORMED}[abstract-True]",),
        check="a-malformed-message-is-tampering",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_delivery_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
