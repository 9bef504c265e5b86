"""Negative controls for the hard seal's confinement: break the homes' layer, the checkout's
real bind, the read-only git metadata, installation and CI files, the masks of what sealed
variables and links name, the command's own session or the filter's TIOCSTI refusal in a copy
of the package; each named test must fail at its named check (harness:
tests/cloudguard_mutants.py)."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

CONFINED = "tests/hard/test_hard_confinement.py::"
HOME = f"{CONFINED}test_writes_to_the_home_land_in_a_layer_thrown_away_after_the_run"
CHECKOUT = f"{CONFINED}test_the_checkout_inside_a_layered_home_is_written_for_real_its_git_is_not"
INSTALLATION = f"{CONFINED}test_the_interpreters_installation_and_cloudguards_package_are_read_only"
CI_FILES = f"{CONFINED}test_the_ci_runners_files_are_read_only_inside"
TERMINAL = f"{CONFINED}test_the_command_has_a_session_of_its_own_and_cannot_push_terminal_input"
CTRL_C = f"{CONFINED}test_ctrl_c_at_the_terminal_still_reaches_the_command_once"
NAMED = f"{CONFINED}test_files_named_by_sealed_variables_and_linked_credentials_read_empty"
REFUSED_LAYER = (
    f"{CONFINED}test_where_the_kernel_refuses_the_homes_layer_the_home_is_read_only_and_said"
)
ADC = f"{CONFINED}test_application_default_credentials_are_found_nowhere_inside"
KUBECONFIG = f"{CONFINED}test_the_files_kubeconfig_names_read_empty_and_the_variable_is_dropped"
OUTPUT = f"{CONFINED}test_a_declared_output_inside_the_home_is_written_for_real"
AS_A_USER = f"{CONFINED}test_as_an_ordinary_user_the_home_is_a_layer_too"
HOME_IN_GIT = f"{CONFINED}test_a_home_kept_in_git_is_still_a_layer_and_the_working_directory_real"
THE_REST = f"{CONFINED}test_the_rest_of_the_filesystem_is_read_only_even_to_root"

MUTATIONS = [
    Mutation(
        name="the homes get no layer: a write there changes the real file",
        module="guard/hard/masks.py",
        original="    entries = layers(homes, cwd, temp_dir)\n",
        broken="    entries: list[Entry] = []\n",
        tests=(HOME, AS_A_USER),
        check="the-real-home-is-unchanged",
    ),
    Mutation(
        name="a home is read-only, not a layer: a cache written under ~ fails",
        module="guard/hard/masks.py",
        original="            elif layers_dir is None:\n",
        broken="            elif True:\n",
        tests=(HOME,),
        check="a-cache-written-under-home-reads-back",
    ),
    Mutation(
        name="the checkout inside a layered home is not bound back real",
        module="guard/hard/masks.py",
        original="            entries.append(Entry(path, REAL, why))\n",
        broken="            pass\n",
        tests=(CHECKOUT,),
        check="the-checkout-is-written-for-real",
    ),
    Mutation(
        name="a repository at ~ (dotfiles in git) is taken for the run's checkout",
        module="guard/hard/masks.py",
        original="    if any(_within(os.path.realpath(home), checkout) for home in homes):\n",
        broken="    if False:\n",
        tests=(HOME_IN_GIT,),
        check="a-home-in-git-is-a-layer",
    ),
    Mutation(
        name="a declared output inside a layered home is bound from the layer, not the real one",
        module="guard/hard/masks.py",
        original="            if entry.kind == WRITABLE and _beneath_layer(entry.path, layered, "
        "bound_back):\n",
        broken="            if False:\n",
        tests=(OUTPUT,),
        check="a-declared-output-is-written-for-real",
    ),
    Mutation(
        name="the checkout's git metadata is not read-only whole",
        module="guard/hard/masks.py",
        original="    entries += [Entry(path, READ_ONLY, GIT_METADATA) for path in git_metadata"
        "(cwd)]\n",
        broken="",
        tests=(CHECKOUT,),
        check="the-git-metadata-is-read-only",
    ),
    Mutation(
        name="the interpreter's installation and cloudguard's package are writable",
        module="guard/hard/launch.py",
        original="                installation=masks.installation(),\n",
        broken="",
        tests=(INSTALLATION,),
        check="the-installation-is-unchanged",
    ),
    Mutation(
        name="the CI runner's files are writable inside",
        module="guard/hard/masks.py",
        original="    entries += ci_files(environ, kept)\n",
        broken="",
        tests=(CI_FILES,),
        check="the-ci-files-are-unchanged",
    ),
    Mutation(
        name="the command shares the operator's session",
        module="guard/hard/command_init.py",
        original="        os.setsid()\n",
        broken="",
        tests=(TERMINAL,),
        check="no-controlling-terminal-inside",
    ),
    Mutation(
        name="the operator's session shared and TIOCSTI let through the filter",
        module="guard/hard/command_init.py",
        original="        os.setsid()\n",
        broken="",
        also=(
            (
                "guard/hard/seccomp_filter.py",
                '    p.jump(_JEQ_K, arch.calls["ioctl"], "ioctl", 0)\n',
                "",
            ),
        ),
        tests=(TERMINAL,),
        check="tiocsti-never-reaches-the-terminal",
    ),
    Mutation(
        name="Ctrl-C is not passed on to the command in its own session",
        module="guard/hard/command_init.py",
        original="signal.SIGHUP, signal.SIGQUIT, signal.SIGINT)",
        broken="signal.SIGHUP, signal.SIGQUIT)",
        tests=(CTRL_C,),
        check="ctrl-c-reaches-the-command-once",
    ),
    Mutation(
        name="the rest of the filesystem stays writable to what can write it",
        module="guard/hard/supervisor.py",
        original="    masks.freeze_the_rest(applied, setup.cwd, setup.temp_dir)\n",
        broken="",
        tests=(THE_REST,),
        check="the-rest-is-read-only",
    ),
    Mutation(
        name="what a sealed variable names stays readable",
        module="guard/hard/masks.py",
        original="    entries += named_by_sealed_variables(environ, sealed, cwd, kept)\n",
        broken="",
        tests=(NAMED,),
        check="the-file-a-sealed-variable-names-is-masked",
    ),
    Mutation(
        name="the directory CLOUDSDK_CONFIG names (its ADC) stays readable",
        module="guard/hard/masks.py",
        original="    entries += named_by_sealed_variables(environ, sealed, cwd, kept)\n",
        broken="",
        tests=(ADC,),
        check="the-cloudsdk-config-directory-is-masked",
    ),
    Mutation(
        name="a home whose layer the kernel refused is left writable",
        module="guard/hard/masks.py",
        original="                    linux.mount(entry.path, entry.path, None, BIND_TREE)\n"
        "                    _read_only(entry.path)\n"
        "                    os.write(2, layer_refused(",
        broken="                    os.write(2, layer_refused(",
        tests=(REFUSED_LAYER,),
        check="a-refused-layer-leaves-the-home-read-only",
    ),
    Mutation(
        name="a home whose layer the kernel refused is read-only, silently",
        module="guard/hard/masks.py",
        original='                    os.write(2, layer_refused(entry.path, error).encode("utf-8", '
        '"replace"))\n',
        broken="                    pass\n",
        tests=(REFUSED_LAYER,),
        check="a-refused-layer-is-said",
    ),
    Mutation(
        name="KUBECONFIG is not sealed: it reaches the command and its files stay readable",
        module="guard/registry.toml",
        original='KUBECONFIG = "kubectl/client-go config: cluster credentials; an exec plugin runs '
        'a cloud login"\n',
        broken="",
        tests=(KUBECONFIG,),
        check="kubeconfig-is-sealed",
    ),
    Mutation(
        name="what KUBECONFIG names stays readable though the variable is sealed",
        module="guard/hard/masks.py",
        original="    entries += named_by_sealed_variables(environ, sealed, cwd, kept)\n",
        broken="",
        tests=(KUBECONFIG,),
        check="the-files-kubeconfig-names-are-masked",
    ),
    Mutation(
        name="where a link inside a masked home points stays readable",
        module="guard/hard/masks.py",
        original="    entries += link_targets([entry.path for entry in credential], kept)\n",
        broken="",
        tests=(NAMED,),
        check="a-link-target-inside-a-masked-home-is-masked",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_hard_seals_confinement_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
