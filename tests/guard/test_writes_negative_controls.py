"""Negative controls for the writes a run must not make (harness: tests/cloudguard_mutants.py).

Each control breaks one part in a copy of the package: the fingerprint of the
ambient roots sees nothing, git's comparison sees nothing, the per-test watch
sees nothing, a dirty checkout is blamed on the run, declared outputs do not
count, a discovered file's outputs count in HOME, the seal keeps the
outranking variable; under --hard, the gate, the read-only mounts and the refusal. The named
tests must go red, each at its named check, and pass on the unbroken code.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

WRITES = "tests/guard/test_writes.py::"
TRACKED = "tests/guard/test_tracked_files.py::"
COMMAND = WRITES + "test_a_command_that_writes_into_each_kind_of_root_is_red_naming_each"
UNDER_RUN = WRITES + "test_a_suite_under_run_is_red_naming_each_write_and_the_test_that_made_it"
ALONE = WRITES + "test_the_plugin_alone_names_each_write_serially_and_every_write_under_xdist"
OUTPUTS = WRITES + "test_the_same_suite_with_its_writes_declared_as_outputs_is_green"
DISCOVERED = (
    WRITES + "test_a_discovered_file_declares_outputs_outside_its_checkout_only_once_trusted"
)
REGISTRY = (
    "tests/guard/test_registry.py::test_a_discovered_file_declares_outputs_in_its_checkout_only"
)
HOOK = TRACKED + "test_a_hook_written_into_the_checkouts_git_directory_is_an_ambient_write"
FURTHER = TRACKED + "test_a_dirty_file_changed_further_and_a_deletion_are_named"
DIRTY = TRACKED + "test_a_checkout_dirty_before_the_run_is_not_blamed_on_it"
HARD = "tests/hard/test_hard_roots.py::"
HARD_WRITES = HARD + "test_a_write_into_each_root_is_refused_inside_and_recorded_at_the_attempt"
HARD_MOUNTS = HARD + "test_each_existing_root_is_a_read_only_mount_inside_and_an_output_writable"
HOSTILE = (
    "tests/guard/test_hostile_roots.py::"
    "test_a_hostile_environment_run_is_green_and_leaves_the_hostile_roots_byte_identical"
)

MUTATIONS = [
    Mutation(
        name="no fingerprint: the roots are not compared after the run",
        module="guard/witness.py",
        original="for change in _explained(self.snapshot.changes(self.snapshot.again()))",
        broken="for change in []",
        tests=(COMMAND, HOOK, ALONE),
        check={
            COMMAND: "ambient-writes-are-found-after-the-run",
            HOOK: "a-hook-written-is-named",
            ALONE: "ambient-writes-are-found-after-the-run",  # under xdist only it names them
        },
    ),
    Mutation(
        name="git's lists are not compared",
        module="guard/tracked.py",
        original="        found.append(Change(path, change, checkout.root))\n",
        broken="        pass\n",
        tests=(COMMAND, FURTHER),
        check={
            COMMAND: "tracked-writes-are-found-after-the-run",
            FURTHER: "a-further-change-and-a-deletion-are-named",
        },
    ),
    Mutation(
        name="the per-test watch sees nothing",
        module="guard/watch.py",
        original="                    seen.setdefault(path, (change, entry))\n",
        broken="                    pass\n",
        tests=(UNDER_RUN, ALONE),
        check="a-write-is-named-in-its-test",
    ),
    Mutation(
        name="a dirty checkout is blamed on the run",
        module="guard/tracked.py",
        original="        if was == now:\n",
        broken="        if False:\n",
        tests=(DIRTY,),
        check="a-dirty-checkout-is-not-blamed-on-the-run",
    ),
    Mutation(
        name="declared outputs do not count",
        module="guard/tracked.py",
        original="        if _left_out(os.path.join(checkout.root, path), path, outputs, skip):\n",
        broken="        if False:\n",
        tests=(OUTPUTS,),
        check="declared-outputs-are-not-writes",
    ),
    Mutation(
        name="an untrusted file's outputs count outside its checkout",
        module="guard/registry.py",
        original="        if (declared.forward_ports or outside) and not document.trusted:\n",
        broken="        if declared.forward_ports and not document.trusted:\n",
        tests=(REGISTRY, DISCOVERED),
        check="untrusted-outputs-outside-the-checkout-are-ignored",
    ),
    Mutation(
        name="the seal keeps the variable that outranks the suite's data root",
        module="guard/registry.py",
        original="return name in self.names or name.startswith(self.prefixes)",
        broken="return name.startswith(self.prefixes)",
        tests=(HOSTILE,),
        check="the-hostile-roots-are-left-byte-identical",
    ),
]

# Under --hard: the mount refuses, the gate records (and refuses where there is no mount).
MUTATIONS += [
    Mutation(
        name="the hard seal's gate does not watch writes",
        module="guard/hard/launch.py",
        original="seccomp_filter.native(write_calls=bool(roots))",
        broken="seccomp_filter.native()",
        tests=(HARD_WRITES,),
        check="a-write-is-recorded-at-the-attempt",
    ),
    Mutation(
        name="the ambient roots are not read-only inside",
        module="guard/hard/masks.py",
        original="[Entry(path, READ_ONLY, AMBIENT_ROOT) for path in ambient_roots]",
        broken="[]",
        tests=(HARD_MOUNTS,),
        check="an-existing-root-is-read-only-inside",
    ),
    Mutation(
        name="the gate lets a write into a root go on",
        module="guard/hard/writes.py",
        original="                    answer(call, error=errno.EROFS)\n",
        broken="                    answer(call, go_on=True)\n",
        tests=(HARD_WRITES,),
        check="a-write-into-a-root-is-refused",  # no mount where there is no root yet
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_write_guard_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
