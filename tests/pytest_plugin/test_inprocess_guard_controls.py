"""Negative controls for the in-process guards and redaction, one code path each: break it in a
copy of the package; each named test must fail at its named check (harness:
tests/cloudguard_mutants.py).

An SDK imported before the guards (patched at once, not on import), every socket entry
point the guard patches, the per-call dedupe and botocore's
unwrap (each alone: either one hides the other's absence from a test that breaks
both), and each branch of redaction that a secret-bearing line takes.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

EDGES = (
    "tests/pytest_plugin/test_plugin_proof.py::"
    "test_fixture_xfail_teardown_async_and_credential_fetches"
)
RETRIES = (
    "tests/pytest_plugin/test_plugin_default_retries.py::"
    "test_a_refusal_is_recorded_once_per_call_with_default_retries"
)
SECRETS = "tests/pytest_plugin/test_plugin_secrets.py::test_no_secret_value_survives_redaction"
LOOKUPS = '    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex"):\n'

MUTATIONS = [
    Mutation(
        name="an SDK imported before the guards left unpatched",
        module="guard/inprocess/imports.py",
        original="        _pending.pop(name, None)\n        patch(module)\n        return\n",
        broken="        _pending.pop(name, None)\n        return\n",
        tests=(
            "tests/harness/test_fork_server.py::"
            "test_a_run_forked_from_a_server_that_preloaded_an_sdk_has_it_guarded",
        ),
        check="an-sdk-imported-first-is-guarded",
    ),
    Mutation(
        name="connect_ex unguarded",
        module="guard/inprocess/socket_guard.py",
        original='    patches.swap(module.socket, "connect_ex", _guarded_connect)\n',
        broken="",
        tests=(EDGES,),
        check="test_connect_ex_swallowed is red naming its reach",
    ),
    Mutation(
        name="gethostbyname unguarded",
        module="guard/inprocess/socket_guard.py",
        original=LOOKUPS,
        broken='    for name in ("getaddrinfo", "gethostbyname_ex"):\n',
        tests=(EDGES,),
        check="test_gethostbyname_swallowed is red naming its reach",
    ),
    Mutation(
        name="gethostbyname_ex unguarded",
        module="guard/inprocess/socket_guard.py",
        original=LOOKUPS,
        broken='    for name in ("getaddrinfo", "gethostbyname"):\n',
        tests=(EDGES,),
        check="test_gethostbyname_ex_swallowed is red naming its reach",
    ),
    Mutation(
        name="a call reaching the socket again is recorded again",
        module="guard/inprocess/socket_guard.py",
        original="    already = target in attempt.recorded\n",
        broken="    already = False\n",
        tests=(RETRIES,),
        check="test_azure_policy_retrying_everything is one record",
    ),
    Mutation(
        name="botocore's wrapper of the refusal is handed on (and retried)",
        module="guard/inprocess/botocore_guard.py",
        original="            if isinstance(refused, CloudReachRefused):\n",
        broken="            if False:\n",
        tests=(RETRIES,),
        check="test_boto3_default_retries is handed the refusal itself",
    ),
    Mutation(
        name="a user-only URL user-info is kept",
        module="guard/redaction.py",
        original='if ":" in userinfo else f"{REDACTED}@{host}"',
        broken='if ":" in userinfo else authority',
        tests=(f"{SECRETS}[az repos import create]",),
        check="no-secret-survives",
    ),
    Mutation(
        name="the value of a non-secret --opt=VALUE is not judged",
        module="guard/redaction.py",
        original='                out.append(f"{option}={redact_value(value)}" if eq else text)\n',
        broken="                out.append(text)\n",
        tests=(f"{SECRETS}[az functionapp config appsettings]",),
        check="no-secret-survives",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_an_in_process_rule_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
