"""Negative controls for telling the truth (harness: tests/cloudguard_mutants.py).

Break each rule in a copy of the package; the named test must go red with
its named check:

- judged back at the SDK layer (before the HTTP-level mocks answer), the
  responses and vcrpy tests of the matrix turn red;
- sealed late (at pytest_configure, after pytest-env and the conftest), the
  suite's own settings are lost;
- redaction by an exact list of option names lets the table's secrets through.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

MATRIX = (
    "tests/pytest_plugin/test_plugin_matrix.py::"
    "test_each_mocked_test_is_green_and_each_twin_red[serial]"
)
MUTATIONS = [
    Mutation(
        name="azure-core judged at the SDK layer",
        module="guard/inprocess/azure_guard.py",
        original="""        try:
            return original(self, request, **kwargs)
""",
        broken="""        try:
            from cloudguard.guard.inprocess.socket_guard import judge

            judge(urlsplit(str(request.url)).hostname, None, "the SDK layer")
            return original(self, request, **kwargs)
""",
        tests=(MATRIX,),
        check=("mocked test_mocked_responses_azure", "mocked test_mocked_vcrpy_azure"),
    ),
    Mutation(
        name="botocore judged at the SDK layer",
        module="guard/inprocess/botocore_guard.py",
        original="""        try:
            return original(self, request)
""",
        broken="""        try:
            from cloudguard.guard.inprocess.socket_guard import judge

            judge(parts.hostname, None, "the SDK layer")
            return original(self, request)
""",
        tests=(MATRIX,),
        check="mocked test_mocked_vcrpy_boto3",
    ),
    Mutation(
        name="sealed late, after pytest-env and the conftest",
        module="guard/pytest/early.py",
        original="        return EarlySeal.make(config, rules)\n",
        broken="        return None  # sealed at pytest_configure instead\n",
        tests=(
            "tests/pytest_plugin/test_plugin_declared.py::"
            "test_the_suites_declared_settings_survive_and_are_listed_as_kept[serial]",
        ),
        check="inner test_pytest_env_settings_survive passes",
    ),
    Mutation(
        name="redaction by an exact list of option names",
        module="guard/redaction.py",
        original=(
            "    return lowered in SECRET_NAMES or any(word in lowered for word in SECRET_WORDS)\n"
        ),
        # The exact list of option names redaction used before it judged names by what
        # they are: it misses `--admin-password` and every other name it does not spell.
        broken="""    return lowered in {
        "p", "pass", "passwd", "password", "certificate-password", "service-principal-password",
        "secret", "client-secret", "key", "account-key", "access-key", "secret-key",
        "secret-access-key", "aws-secret-access-key", "private-key", "api-key",
        "token", "sas", "sas-token", "access-token", "id-token", "federated-token",
        "session-token", "auth-token", "signature", "credential", "credentials",
        "connection-string",
    }
""",
        tests=(
            "tests/pytest_plugin/test_plugin_secrets.py::"
            "test_no_secret_value_survives_redaction[az vm create -g]",
        ),
        check="no-secret-survives",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_rule_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
