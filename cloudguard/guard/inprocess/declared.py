"""The in-process guards, each as it declares itself; every table derives from these.

A guard declares the `via` its records carry, the modules whose import
installs it (each with the hook applied to that module, named as
`hook_module:function`), how a refusal names a call it hooks, and the advice
a test author reads. The package installs and uninstalls from `DECLARED`,
`cloudguard.guard.hints` finds each guard's advice here, and the socket
guard names an SDK's call with that SDK's words: a new guard is its hook
module and one declaration below.

Why here and not in each hook module: every sealed Python child loads the
declarations at start-up (its sitecustomize installs the guards), while a
hook module is imported only when what it guards is (its trigger): loading
the hook modules for their declarations would add ~1 ms to every
sealed Python child (measured; benchmarks/bench_pytest_plugin.py). So the
declarations are plain data, and the hooks are named, not imported.

Stdlib only, no imports of its own beyond `imports`.
"""

from __future__ import annotations

from cloudguard.guard.inprocess import imports

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType


class InProcessGuard:
    """One in-process guard, as it declares itself. A plain class: dataclasses import inspect."""

    __slots__ = ("hint", "request", "triggers", "via")

    def __init__(
        self, via: str, *, triggers: Mapping[str, str], hint: str, request: str = ""
    ) -> None:
        self.via = via  # the channel its records name (`botocore`, `socket`, ...)
        # Module name -> `hook_module:function`, applied to that module when it is imported.
        self.triggers = dict(triggers)
        # The advice after "To make the test hermetic:"; lines unindented (hints indents them).
        self.hint = hint
        # How a refusal names a call this guard hooks ("an AWS request"); "" when it hooks none.
        self.request = request

    def install(self) -> None:
        """Patch each trigger module now if it is imported, else right after it is."""
        for module, hook in self.triggers.items():
            imports.when_imported(module, _hook(hook))


def _hook(reference: str) -> imports.Patch:
    """The patch `hook_module:function` names; its module is imported when its trigger fires."""
    module_name, _, function = reference.partition(":")

    def patch(module: ModuleType) -> None:
        from importlib import import_module

        hooks = import_module(f"{__package__}.{module_name}")
        getattr(hooks, function)(module)

    return patch


BOTOCORE = InProcessGuard(
    "botocore",
    triggers={
        "botocore.httpsession": "botocore_guard:patch",
        "botocore.client": "botocore_guard:patch_client",
    },
    request="an AWS request",
    hint=(
        "mock AWS in process (moto's @mock_aws, botocore's Stubber, a vcrpy cassette),\n"
        "or point the client at a loopback endpoint_url (moto's ThreadedMotoServer(port=0))."
    ),
)
AZURE_CORE = InProcessGuard(
    "azure-core",
    triggers={
        "azure.core.pipeline._base": "azure_guard:patch_sync",
        "azure.core.pipeline._base_async": "azure_guard:patch_async",
    },
    request="an Azure request",
    hint=(
        "mock Azure above the socket (responses, requests-mock, a vcrpy cassette;\n"
        "aioresponses for .aio clients), give the client an in-process transport\n"
        "(transport=...) and a fake credential, or point it at a local fake on loopback\n"
        "over HTTPS (base_url='https://127.0.0.1:PORT', a trustme certificate)."
    ),
)
GOOGLE_AUTH = InProcessGuard(
    "google-auth",
    triggers={
        "google.auth.transport.requests": "google_guard:patch_requests",
        "google.auth.transport.urllib3": "google_guard:patch_urllib3",
        "google.auth.transport._http_client": "google_guard:patch_http_client",
        "google.auth.transport._aiohttp_requests": "google_guard:patch_aiohttp_requests",
        "google.auth.aio.transport.aiohttp": "google_guard:patch_aio_aiohttp",
        # google-cloud-core's connection: a client's REST calls on whatever session it holds.
        "google.cloud._http": "google_guard:patch_cloud_connection",
    },
    request="a Google request",
    hint=(
        "mock Google above the socket (responses or requests-mock on *.googleapis.com, a vcrpy\n"
        "cassette), pass credentials=AnonymousCredentials() (google.auth.credentials) or patch\n"
        "google.auth.default (unittest.mock), or point the client at an emulator or a local\n"
        "fake on loopback (STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT,\n"
        "client_options={'api_endpoint': 'http://127.0.0.1:PORT'}). Instance metadata\n"
        "(metadata.google.internal, 169.254.169.254) is never reachable from a test."
    ),
)
GRPC = InProcessGuard(
    "grpc",
    triggers={
        "grpc._channel": "grpc_guard:patch",
        "grpc.aio._channel": "grpc_guard:patch_aio",
        # grpc.aio runs a channel's interceptors inside the call: judged where they continue.
        "grpc.aio._call": "grpc_guard:patch_aio_calls",
    },
    request="a gRPC call",
    hint=(
        "point the channel at an emulator or a fake on loopback (PUBSUB_EMULATOR_HOST and\n"
        "friends, client_options={'api_endpoint': '127.0.0.1:PORT'} with AnonymousCredentials,\n"
        "grpc.server on 127.0.0.1), or patch the stub the test calls\n"
        "(mock.patch.object(type(client.transport.METHOD), '__call__'))."
    ),
)
SOCKET = InProcessGuard(
    "socket",
    triggers={
        "socket": "socket_guard:install",
        # asyncio resolves names in a worker thread: its loop judges in the caller's context.
        "asyncio.base_events": "socket_guard:patch_event_loop",
    },
    hint=(
        "connect to a local fake on loopback instead of the cloud host. Instance metadata\n"
        "(169.254.169.254 and friends) is never reachable from a test: pass the test's\n"
        "own fake credentials explicitly."
    ),
)

# Every in-process guard. The order is the order they install.
DECLARED: tuple[InProcessGuard, ...] = (BOTOCORE, AZURE_CORE, GOOGLE_AUTH, GRPC, SOCKET)
