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
DOORS = [
    TRACKED + f"test_nothing_the_command_planted_for_git_runs_after_it[{kind}]"
    for kind in (
        "fsmonitor-in-home-gitconfig",
        "clean-filter-in-git-config-global",
        "fsmonitor-in-dot-git-config",
        "a-dot-git-indirection",
        "git-first-on-path",
    )
]
CLEAN = TRACKED + "test_a_file_git_holds_as_clean_is_compared_as_its_object"
TOLD = TRACKED + "test_what_would_hide_a_change_from_git_is_a_finding[{}]"
LINK = (
    "tests/guard/test_ambient_roots.py::"
    "test_a_write_through_a_link_inside_a_root_is_judged_where_it_points"
)
WATCH_LINK = (
    "tests/guard/test_ambient_roots.py::test_the_watch_names_a_write_through_a_link_inside_a_root"
)
NOT_THE_COMMANDS = "tests/guard/test_writes_not_the_commands.py::"
HISTORY = NOT_THE_COMMANDS + "test_the_history_store_written_by_another_process_is_no_finding"
OWN_OUTPUT = NOT_THE_COMMANDS + "test_the_runs_own_output_file_in_the_checkout_is_no_finding"
READ_ONLY_INSIDE = (
    "tests/hard/test_hard_witness.py::"
    "test_a_root_read_only_inside_changed_by_another_process_is_no_finding"
)
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
        original="        if listed and _same(was, now):\n",
        broken="        if listed and False:\n",
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
        module="guard/seal_registry.py",
        original="        if (declared.forward_ports or outside) and not document.trusted:\n",
        broken="        if declared.forward_ports and not document.trusted:\n",
        tests=(REGISTRY, DISCOVERED),
        check="untrusted-outputs-outside-the-checkout-are-ignored",
    ),
    Mutation(
        name="the seal keeps the variable that outranks the suite's data root",
        module="guard/seal_registry.py",
        original="return name in self.names or name.startswith(self.prefixes)",
        broken="return name.startswith(self.prefixes)",
        tests=(HOSTILE,),
        check="the-hostile-roots-are-left-byte-identical",
    ),
]

# Issue 31: the witness runs nothing the command could plant, cannot be told, and blames the
# command for nothing it did not write.
MUTATIONS += [
    Mutation(
        name="git is asked again after the run, as the operator",
        module="guard/witness.py",
        original=(
            "            now = self.checkout.look(self.tracked_before)  # no git after the run\n"
        ),
        broken=(
            "            now = (__import__('subprocess').run(['git', '-C', self.checkout.root,"
            " 'status'], capture_output=True, check=False),"
            " self.checkout.look(self.tracked_before))[1]\n"
        ),
        tests=tuple(DOORS),
        check="nothing-planted-for-git-runs-after-the-run",
    ),
    Mutation(
        name="the .git metadata is not compared (a commit, a skip-worktree bit)",
        module="guard/tracked.py",
        original=(
            "        if not _held_same(meaning, held, now_metadata.get(path, (meaning, None))"
            "[1]):\n"
        ),
        broken="        if False:\n",
        tests=(TOLD.format("a-commit-during-the-run"), TOLD.format("a-skip-worktree-bit")),
        check="what-would-hide-a-change-from-git-is-found",
    ),
    Mutation(
        name="a new path is judged by the ignore rules as they are after the run",
        module="guard/tracked.py",
        original="                    before.rules, path, is_directory=is_directory\n",
        broken=(
            "                    self._rules({**before.files, **{os.path.relpath(os.path.join("
            "d, '.gitignore'), self.root): None for d, _, names in os.walk(self.root) "
            "if '.gitignore' in names}}), path, is_directory=is_directory\n"
        ),
        tests=(TOLD.format("a-new-gitignore-with-a-star"), TOLD.format("a-global-excludes-file")),
        check="what-would-hide-a-change-from-git-is-found",
    ),
    Mutation(
        name="a file the index held as clean is not read again after the run",
        module="guard/tracked.py",
        original='        return (*now[:6], "blob " + _object_id(path, oid_size))\n',
        broken="        return was\n",
        tests=(CLEAN,),
        check="a-clean-file-is-compared-as-its-object",
    ),
    Mutation(
        name="a link inside a root is not followed",
        module="guard/roots.py",
        original="                target = _followed(path)\n",
        broken="                target = None\n",
        tests=(LINK,),
        check="a-write-through-a-link-in-a-root-is-named",
    ),
    Mutation(
        name="the per-test watch does not follow a link inside a root",
        module="guard/watch.py",
        original="                            self._watch_link(entry.path, root)\n",
        broken="                            pass\n",
        also=(
            (
                "guard/watch.py",
                "                        if entry.is_dir():  # a link to a directory too\n",
                "                        if entry.is_dir(follow_symlinks=False):\n",
            ),
        ),
        tests=(WATCH_LINK,),
        check="the-watch-names-a-write-through-a-link",
    ),
    Mutation(
        name="the history store is watched as part of the state root",
        module="guard/witness.py",
        original="        skip = [*skip, *history_store(environ)]\n",
        broken="        skip = [*skip]\n",
        tests=(HISTORY,),
        check="the-history-store-is-not-an-ambient-root",
    ),
    Mutation(
        name="cloudguard's own stdout/stderr file is judged as the command's",
        module="guard/witness.py",
        original="        witness.own_output = own_output()\n",
        broken="        witness.own_output = frozenset()\n",
        tests=(OWN_OUTPUT,),
        check="the-runs-own-output-file-is-no-finding",
    ),
    Mutation(
        name="a root read-only inside the hard seal is judged as the command's",
        module="guard/witness.py",
        original="        self.sealed = read_only(self.roots, self.outputs)[0]\n",
        broken="        self.sealed = []\n",
        tests=(READ_ONLY_INSIDE,),
        check="a-root-read-only-inside-is-not-the-commands-finding",
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
