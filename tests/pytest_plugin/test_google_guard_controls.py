"""Negative controls for Google Cloud's in-process guards: break each in a copy of the package;
each named test must fail at its named check (harness: tests/cloudguard_mutants.py).

Without google-auth's naming hooks the REST twins are still refused at the socket, but
recorded as `socket reached ...` (or, for a token fetch inside an API call, under the API's
host), not as the Google call the matrix names. Without the gRPC guard, or one of its entry
points, the socket guard alone lets the twins pass: the C-core's sockets are not Python's.
The gRPC proof runs in a loopback-only network namespace, so a broken guard sends nothing.
"""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

MATRIX = (
    "tests/pytest_plugin/test_plugin_matrix.py::"
    "test_each_mocked_test_is_green_and_each_twin_red[serial]"
)
GRPC = (
    "tests/pytest_plugin/test_plugin_grpc.py::"
    "test_each_hermetic_grpc_use_is_green_and_each_twin_red"
)
EVERY_GUARD = (
    "GUARDS: dict[str, Callable[[], None]] = {guard.via: guard.install for guard in DECLARED}"
)
GOOGLE_REST_TWINS = (
    "test_twin_responses_google",
    "test_twin_requests_mock_google",
    "test_twin_google_auth_default",
    "test_twin_anonymous_loopback",
    "test_twin_storage_emulator",
)
SYNC_GRPC_TWINS = ("test_twin_patched_stub", "test_twin_loopback_server", "test_twin_emulator_host")
# A suite trying to slip a Google reach past the guards, form by form (test_plugin_google_forms.py).
FORMS = (
    "tests/pytest_plugin/test_plugin_google_forms.py::"
    "test_each_form_of_google_reach_is_red_naming_it_and_each_local_form_green"
)
GUARD = "guard/inprocess/grpc_guard.py"
DECLARED = "guard/inprocess/declared.py"


def _without(via: str) -> str:
    return EVERY_GUARD.replace("DECLARED}", f"DECLARED if guard.via != {via!r}}}")


def _trigger(module: str, hook: str) -> str:
    """A Google hook's line in the declarations: its trigger module and its patch."""
    return f'        "{module}": "google_guard:{hook}",\n'


def _red(*twins: str) -> tuple[str, ...]:
    return tuple(f"twin {name}" for name in twins)


MUTATIONS = [
    Mutation(
        name="the google-auth naming hooks are never installed",
        module="guard/inprocess/__init__.py",
        original=EVERY_GUARD,
        broken=_without("google-auth"),
        tests=(MATRIX,),
        check=_red(*GOOGLE_REST_TWINS),
    ),
    Mutation(
        name="a token fetch or metadata ping over requests is not named",
        module="guard/inprocess/google_guard.py",
        original='    patches.swap(module.AuthorizedSession, "request", _named_call)\n'
        '    patches.swap(module.Request, "__call__", _named_fetch)\n',
        broken='    patches.swap(module.AuthorizedSession, "request", _named_call)\n',
        tests=(MATRIX,),
        check=_red("test_twin_responses_google", "test_twin_google_auth_default"),
    ),
    Mutation(
        name="the gRPC guard is never installed: the socket guard alone sees no gRPC call",
        module="guard/inprocess/__init__.py",
        original=EVERY_GUARD,
        broken=_without("grpc"),
        tests=(GRPC,),
        check=_red(*SYNC_GRPC_TWINS, "test_twin_aio_call", "test_twin_channel_ready"),
    ),
    Mutation(
        name="a call started on a sync gRPC channel is not judged",
        module="guard/inprocess/grpc_guard.py",
        original="            patches.swap(owner, method, _judged_call(method, _sync_target))\n",
        broken="            pass\n",
        tests=(GRPC,),
        check=_red(*SYNC_GRPC_TWINS),
    ),
    Mutation(
        name="a call started on a grpc.aio channel is not judged",
        module="guard/inprocess/grpc_guard.py",
        original='        patches.swap(getattr(module, name), "__call__", '
        '_judged_call("__call__", _aio_target))\n',
        broken="        pass\n",
        tests=(GRPC,),
        check=_red("test_twin_aio_call"),
    ),
    Mutation(
        name="a request to connect (channel_ready_future) is not judged",
        module="guard/inprocess/grpc_guard.py",
        original='    patches.swap(module.Channel, "subscribe", _judged_subscribe)\n',
        broken="",
        tests=(GRPC,),
        check=_red("test_twin_channel_ready"),
    ),
    Mutation(
        name="a dns:/// target's resolver authority is taken for its host",
        module="guard/inprocess/grpc_guard.py",
        original='        rest = rest[2:].partition("/")[2]',
        broken="        rest = rest[2:]",
        tests=(GRPC,),
        check=_red("test_twin_channel_ready"),
    ),
    Mutation(
        name="the authority a channel's options claim for a Google address is not judged",
        module=GUARD,
        original="        for authority in authorities:\n",
        broken="        for authority in ():\n",
        tests=(FORMS,),
        check=_red(
            "test_twin_preresolved_ssl_target_name_override",
            "test_twin_preresolved_default_authority",
            "test_twin_aio_preresolved_authority",
        ),
    ),
    Mutation(
        name="the xDS servers an xds: target's bootstrap names are not judged",
        module=GUARD,
        original="        for server in _xds_servers():\n",
        broken="        for server in ():\n",
        tests=(FORMS,),
        check=_red("test_twin_xds_bootstrap_server"),
    ),
    Mutation(
        name="the DNS server a dns://SERVER/ target asks is not judged",
        module=GUARD,
        original='        yield _host_port(resolver, "53")',
        broken="        pass",
        tests=(FORMS,),
        check=_red("test_twin_dns_metadata_resolver"),
    ),
    Mutation(
        name="the metadata server a google-c2p: target asks is not judged",
        module=GUARD,
        original="        yield _C2P_METADATA\n",
        broken="        pass\n",
        tests=(FORMS,),
        check=_red("test_twin_c2p_internal_name"),
    ),
    Mutation(
        name="a sync channel made before the guard is taken as one that claims nothing",
        module=GUARD,
        original="        target.authorities = getattr(self, _CLAIMED, None)",
        broken="        target.authorities = getattr(self, _CLAIMED, ())",
        also=(
            (
                GUARD,
                "target.authorities if isinstance(target, _Target) else None",
                "target.authorities if isinstance(target, _Target) else ()",
            ),
        ),
        tests=(FORMS,),
        check=_red("test_twin_early_authority_channel", "test_twin_early_authority_stub"),
    ),
    Mutation(
        name="a grpc.aio call's target is what the guard saw made, not what the C-core says",
        module=GUARD,
        original='    target = getattr(getattr(multicallable, "_channel", None), "target", None)\n',
        broken="    target = None\n",
        tests=(FORMS,),
        check=_red("test_twin_early_aio_channel"),
    ),
    Mutation(
        name="a grpc.aio call its channel's interceptors continue to is not judged",
        module=DECLARED,
        original='        "grpc.aio._call": "grpc_guard:patch_aio_calls",\n',
        broken="",
        tests=(FORMS,),
        check=_red("test_twin_aio_interceptor"),
    ),
    Mutation(
        name="google-auth's http.client transport is not named",
        module=DECLARED,
        original=_trigger("google.auth.transport._http_client", "patch_http_client"),
        broken="",
        tests=(FORMS,),
        check=_red("test_twin_auth_http_client_transport"),
    ),
    Mutation(
        name="google-auth's aiohttp transport is not named",
        module=DECLARED,
        original=_trigger("google.auth.transport._aiohttp_requests", "patch_aiohttp_requests"),
        broken="",
        tests=(FORMS,),
        check=_red("test_twin_auth_aiohttp_transport"),
    ),
    Mutation(
        name="google-auth's asyncio transport is not named",
        module=DECLARED,
        original=_trigger("google.auth.aio.transport.aiohttp", "patch_aio_aiohttp"),
        broken="",
        tests=(FORMS,),
        check=_red("test_twin_auth_aio_session"),
    ),
    Mutation(
        name="google-cloud-core's connection is not named (a client on a session of its own)",
        module=DECLARED,
        original=_trigger("google.cloud._http", "patch_cloud_connection"),
        broken="",
        tests=(FORMS,),
        check=_red("test_twin_storage_plain_http"),
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_google_guard_turns_its_test_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
