"""One AWS session: what the sweep, the organization sweep and the reaper all need.

The boto3 session (`--credential PROFILE`, or boto3's own chain; for a
loopback endpoint only the fake's fixed keys, by the kernel's one rule of
where credentials may go: cloudguard.cloud.endpoints), the check that it has
credentials at all (one failure naming the chain tried), the
client options (`--management-endpoint`, `--ca-bundle`, the retry budget),
the enabled regions (the default scope) and the one-line description of a
botocore error. The sweep (cloudguard_aws.adapter, organizations) and the
reaper import this module; it imports neither. boto3 is imported inside the
functions.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from cloudguard.cloud.endpoints import CloudEndpoints, credential_for
from cloudguard.cloud.records import SweepRequest

# Where real AWS keys may go: the endpoints of the services the sweep and the reaper call
# (EC2, STS, Organizations, the Resource Groups Tagging API, Resource Explorer, Elastic
# Load Balancing, the Price List Query API), in every partition, FIPS and dual-stack, and
# their VPC interface endpoints. Not any *.amazonaws.com: anyone's load balancer, API
# Gateway or instance answers under it, and would see the session token.
SERVICES = (
    "ec2", "sts", "organizations", "tagging", "resource-explorer-2", "elasticloadbalancing",
    "api\\.pricing",
)  # fmt: skip
ENDPOINTS = CloudEndpoints(
    cloud="AWS",
    fake_credential="fake",
    hosts=re.compile(
        rf"(?:vpce-[a-z0-9-]+\.)?(?:{'|'.join(SERVICES)})(?:-fips)?"
        r"(?:\.[a-z]{2}(?:-[a-z]+)+-\d+)?(?:\.vpce)?\.(?:amazonaws\.com(?:\.cn)?|api\.aws)"
    ),
    described="<ec2|sts|organizations|tagging|resource-explorer-2|elasticloadbalancing|"
    "api.pricing>[-fips].<region>.amazonaws.com[.cn], <service>.<region>.api.aws, their VPC "
    "interface endpoints",
)
# The fake's fixed keys: what a loopback endpoint (moto, LocalStack) gets, never the
# operator's. Good nowhere else.
FAKE_KEYS = {"aws_access_key_id": "cloudguard-fake", "aws_secret_access_key": "cloudguard-fake"}

CREDENTIAL_CHAIN = (
    "environment variables, shared credentials/config files (profiles, SSO, "
    "credential_process), web identity, container credentials, instance metadata (IMDS)"
)


def missing_credentials(session: Any) -> str | None:
    """Why `session` cannot be used (no credentials anywhere in the chain); None if it can."""
    if session.get_credentials() is None:
        return f"no AWS credentials found; tried: {CREDENTIAL_CHAIN}"
    return None


def default_session(request: SweepRequest) -> Any:
    return new_session(profile_name=request.credential) if request.credential else new_session()


# Each botocore session reads the service models it makes clients for (EC2's is 3 MB of
# JSON) into a loader of its own: a session made for each member account of an organization
# sweep, or for each `reap apply` of a process, read them again (a first EC2 client of a
# session ~100 ms of CPU, ~10 ms with the models already read). The models are the same for
# every session of a data path (AWS_DATA_PATH, a profile's `data_path`): one loader each.
_LOADERS: dict[str | None, Any] = {}


def new_session(**settings: Any) -> Any:
    """`boto3.Session(**settings)`, its service models read through the process's loader
    for its data path."""
    import boto3
    import botocore.loaders
    import botocore.session

    core = botocore.session.Session()
    if settings.get("profile_name") is not None:  # as boto3 sets it: the data path is per profile
        core.set_config_variable("profile", settings["profile_name"])
    data_path = core.get_config_variable("data_path")  # ProfileNotFound, as boto3.Session raises
    with _CLIENT_CREATION:
        loader = _LOADERS.get(data_path)
        if loader is None:
            loader = _LOADERS[data_path] = botocore.loaders.create_loader(data_path)
        core.register_component("data_loader", loader)
        session = boto3.Session(botocore_session=core, **settings)
        # boto3 appends its own models' directory to the loader's search path, every session.
        loader.search_paths[:] = list(dict.fromkeys(loader.search_paths))
    return session


def open_session(
    request: SweepRequest, factory: Callable[[SweepRequest], Any] | None = None
) -> Any:
    """The session a sweep or a reaper uses: the fake's fixed keys for a loopback endpoint
    (`--credential fake`), else `factory`'s (default: the profile or boto3's chain).
    EndpointRefused (nothing sent) when the credential may not go to the endpoint."""
    if credential_for(ENDPOINTS, request.endpoint, request.credential):
        return new_session(**FAKE_KEYS)
    return (factory or default_session)(request)


# boto3 sessions are not thread-safe, clients are: the sweeps make clients from one session
# in several threads, so making a client is serialised and using it is not.
_CLIENT_CREATION = threading.Lock()


def make_client(
    session: Any, request: SweepRequest, service: str, region: str, timeout: float | None = None
) -> Any:
    """`timeout`: each attempt's connect and read timeout, when shorter than botocore's
    60 s (`reap apply --item-budget`: no attempt outlasts an item's budget)."""
    from botocore.config import Config

    timeouts = (
        {"connect_timeout": timeout, "read_timeout": timeout}
        if timeout is not None and timeout < BOTOCORE_TIMEOUT
        else {}
    )
    with _CLIENT_CREATION:
        client = session.client(
            service,
            region_name=region,
            endpoint_url=request.endpoint,
            verify=request.ca_bundle,
            config=Config(retries=retry_config(request), **timeouts),
        )
    # Ahead of botocore's own retry handler: a connection that cannot be made is budgeted apart.
    client.meta.events.register_first("needs-retry", connect_budget)
    return client


CONNECT_RETRIES = 2  # retries of a connection that cannot be made, apart from --retries
CONNECT_BACKOFF_MAX = 1.0  # seconds: the longest wait before one of them


def connect_budget(attempts: int, caught_exception: Exception | None = None, **_: Any) -> Any:
    """botocore's `needs-retry` answer for a connection that cannot be made (refused, no
    route, a connect timeout): a dead or mistyped endpoint is no busy server, so it is
    retried `CONNECT_RETRIES` times with short waits, then its error is raised (the sweep
    names it: 75), instead of the whole `--retries` budget's backoffs (up to 20 s each).
    Anything else (throttling, 5xx, read errors) is left to botocore's handler (None)."""
    from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError

    if not isinstance(caught_exception, EndpointConnectionError | ConnectTimeoutError):
        return None
    if attempts > CONNECT_RETRIES:
        raise caught_exception
    return random.uniform(0, min(CONNECT_BACKOFF_MAX, 0.25 * 2**attempts))


BOTOCORE_TIMEOUT = 60.0  # seconds: botocore's default connect and read timeouts


def retry_config(request: SweepRequest) -> dict[str, Any]:
    """botocore's adaptive retry mode with the sweep's retry budget (`--retries`).

    Adaptive is standard mode (backoff with full jitter on RequestLimitExceeded,
    throttling codes and 5xx, x-amz-retry-after honoured) plus a client-side
    rate limiter that slows the client's sending rate after a throttle, so a
    region that throttles is read more slowly instead of harder.
    `total_max_attempts` counts the first request, hence the +1.
    """
    return {"mode": "adaptive", "total_max_attempts": request.retries + 1}


def enabled_regions(session: Any, request: SweepRequest, seed: str) -> list[str]:
    answer = make_client(session, request, "ec2", seed).describe_regions(AllRegions=False)
    return sorted(r["RegionName"] for r in answer["Regions"])


def describe_error(error: Exception) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code", "")
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
        return f"{code} (HTTP {status}): {error}"
    return str(error)


class ItemBudget:
    """`reap apply --item-budget`: a deadline for one item's reads, retries included.

    botocore's retries have no deadline of their own (10 retries of a failing read can
    take minutes), so every read client of the reaper checks it before each attempt
    (`before-send`): past it, the read stops with `ItemBudgetSpent`, the item is
    unreadable (named) and the run exits 75. A backoff already begun may end up to
    botocore's cap (20 s) past it, and an attempt begun inside it up to its own timeout,
    which is capped at the budget (botocore cannot shorten one attempt's timeout as the
    budget runs down; `reap apply` acts on nothing whose reads ended past it).
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._deadline: float | None = None

    def start(self) -> None:
        if self.seconds is not None:
            self._deadline = time.monotonic() + self.seconds

    def bind(self, client: Any) -> Any:
        client.meta.events.register("before-send", self._check)
        return client

    def _check(self, **_: Any) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise _spent(self.seconds or 0.0)


def _spent(seconds: float) -> Exception:
    return _budget_error()(seconds=seconds)


@cache
def _budget_error() -> Callable[..., Exception]:
    """A BotoCoreError (botocore is imported only when a reaper runs): what every read's
    handler already names as an AWS failure."""
    from botocore.exceptions import BotoCoreError

    class ItemBudgetSpent(BotoCoreError):
        fmt = "gave up: time budget of {seconds:g} s per item spent (--item-budget)"

    return ItemBudgetSpent
