"""One Azure session: what the sweep and the reaper both need before their first read.

Credentials (`credentials.build`: the `--credential` name, the loopback-only
`fake-arm`), the preflight (one ARM token before anything else, so a missing
identity is one clear failure naming the chain tried), the token scope of the
management endpoint, the client options (endpoint, CA bundle, timeouts,
retries) and the one-line description of an SDK error. The sweep
(cloudguard_azure.adapter, resource_graph) and the reaper import this module;
it imports neither. Azure SDK imports live inside the functions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cloudguard.cloud.endpoints import is_loopback_endpoint
from cloudguard.cloud.records import SweepRequest
from cloudguard_azure import credentials
from cloudguard_azure.budget import Clock, TimeBudgetExhausted


class SessionRefused(Exception):
    """The credential cannot be used or was refused a token: nothing is read (75)."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


def open_credential(request: SweepRequest) -> Any:
    """The request's credential, with one token already granted for the endpoint's scope.
    Raises SessionRefused naming the credential and why."""
    name = request.credential or "default"
    source = f"azure credential {name}"
    try:
        credential = credentials.build(request.credential, request.endpoint)
    except ValueError as exc:  # CredentialChoiceError, or azure-identity's own check
        raise SessionRefused(source, f"cannot be used: {exc}") from exc
    if refused := preflight(credential, name, arm_scope(request.endpoint)):
        close_credential(credential)
        raise SessionRefused(source, refused)
    return credential


def close_credential(credential: Any) -> None:
    if hasattr(credential, "close"):
        credential.close()


ARM_SCOPE = "https://management.azure.com/.default"


def arm_scope(endpoint: str | None) -> str:
    """The token scope of the management endpoint: sovereign clouds have their own
    (https://management.chinacloudapi.cn/.default, ...); the public cloud's otherwise.
    A loopback endpoint gets its own scope too, never the real cloud's: a token for
    it would be good at real ARM (only `fake-arm` answers loopback; see credentials)."""
    if not endpoint:
        return ARM_SCOPE
    return endpoint.rstrip("/") + "/.default"


def client_options(
    request: SweepRequest,
    clock: Clock,
    *,
    connection_timeout: float = 10.0,
    read_timeout: float = 60.0,
) -> dict[str, Any]:
    """Keyword arguments for ONE azure-mgmt client (or ARMPipelineClient) that reads for a
    sweep: endpoint, CA bundle, timeouts, and the budgeted retry policy and quota pacing
    of `clock`. Call it once per client: a pipeline links the policy objects it is given
    into its own chain, so two live clients must not share them. The clients of one
    subscription share its clock (one deadline, one account of the waits)."""
    from cloudguard_azure.retry import BudgetedRetryPolicy, QuotaPacing, fold_sdk_warnings

    fold_sdk_warnings()
    return {
        **_base_options(request, connection_timeout=connection_timeout, read_timeout=read_timeout),
        "retry_policy": BudgetedRetryPolicy(clock),
        "per_retry_policies": [QuotaPacing(clock)],
    }


def _base_options(
    request: SweepRequest, *, connection_timeout: float, read_timeout: float
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "connection_timeout": connection_timeout,
        "read_timeout": read_timeout,
        "user_agent": "cloudguard-audit",  # visible in the Activity Log's request records
    }
    if request.endpoint:
        options["base_url"] = request.endpoint.rstrip("/")
        options["credential_scopes"] = [arm_scope(request.endpoint)]
        if is_loopback_endpoint(request.endpoint):
            # A loopback endpoint is reached directly: an HTTPS_PROXY from the
            # environment must not carry it (and its token) off the machine.
            options["use_env_settings"] = False
    if request.ca_bundle:
        options["connection_verify"] = request.ca_bundle
    return options


def tenant_client(credential: Any, options: dict[str, Any]) -> Any:
    """A client whose pipeline (credential, retries, endpoint, CA bundle) carries ARM reads
    outside any one subscription (the subscriptions a credential sees), read as JSON with
    `send_request` (cloudguard_azure.paging). Only its pipeline is used: the subscription id
    fills the URLs of its operation groups, which are not called."""
    from azure.mgmt.compute import ComputeManagementClient

    return ComputeManagementClient(credential, subscription_id="", **options)


def preflight(credential: Any, name: str, scope: str = ARM_SCOPE) -> str | None:
    """Ask for one ARM token before sweeping: a missing identity is one clear failure
    naming the chain that was tried, not N identical per-subscription failures."""
    from azure.core.exceptions import ClientAuthenticationError

    try:
        with _identity_warnings_folded():
            credential.get_token(scope)
    except ClientAuthenticationError as exc:
        return f"no token for {scope}: tried {credentials.describe(name)}: {_attempts(str(exc))}"
    return None


@contextmanager
def _identity_warnings_folded() -> Iterator[None]:
    # azure-identity logs each failed credential of a chain as a raw WARNING
    # block on stderr; the same facts are in the exception, which becomes our
    # one failure line. Quiet the logger while we ask, restore it after.
    logger = logging.getLogger("azure.identity")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _attempts(text: str) -> str:
    """A chain's failure, one short clause per credential tried (their first sentence)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    tried = [line for line in lines if re.match(r"^\w+Credential: ", line)]
    if not tried:
        return _first_lines(text, 12)
    return " | ".join(line.split(". ")[0].rstrip(".") for line in tried)


def describe_error(exc: BaseException) -> str:
    """A one-line reason naming the HTTP status and ARM error code where there is one."""
    from azure.core.exceptions import (
        ClientAuthenticationError,
        DecodeError,
        IncompleteReadError,
        ServiceRequestError,
    )

    if isinstance(exc, TimeBudgetExhausted):
        return f"gave up: {exc}"
    if isinstance(exc, ServiceRequestError):
        return _not_connected(str(exc))
    if isinstance(exc, IncompleteReadError):
        # azure-core's text is urllib3's tuple, and its log a bare "Incomplete download.".
        read = _INCOMPLETE.search(str(exc))
        detail = f": {read.group(1)} bytes read, {read.group(2)} more expected" if read else ""
        return f"connection reset mid-response (page cut off{detail}); retries exhausted"
    status = getattr(exc, "status_code", None)
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    message = getattr(error, "message", None) or _first_lines(str(exc), 1)
    if isinstance(exc, DecodeError):
        return f"unreadable response (not valid JSON): {_first_lines(str(exc), 1)}"
    if status is not None:
        return f"HTTP {status}{f' {code}' if code else ''}: {message}"
    if isinstance(exc, ClientAuthenticationError):
        return f"authentication failed: {_first_lines(str(exc), 3)}"
    return f"{type(exc).__name__}: {_first_lines(str(exc), 1)}"


def arm_code(exc: Exception) -> str:
    """ARM's error code of a failed request, casefolded ("" when it names none)."""
    code = getattr(getattr(exc, "error", None), "code", None)
    if not code:
        try:
            code = exc.response.json()["error"]["code"]  # type: ignore[attr-defined]
        except Exception:
            code = ""
    return str(code).casefold()


def _not_connected(text: str) -> str:
    """A connection that could not be made (the connect retries spent, a few quick ones):
    where to, and the system's own reason (urllib3's text, its object names left out)."""
    where = _CONNECTING.search(text)
    target = f"{where.group(1)}:{where.group(2)}" if where else "the endpoint"
    reason = _first_lines(text, 1)
    for pattern in (r"\[Errno -?\d+\][^)'\"]*", r"timed out", r"Name or service not known"):
        if found := re.search(pattern, text):
            reason = found.group(0).strip().rstrip(".,")
            break
    return f"could not connect to {target}: {reason} (connect retries spent)"


_CONNECTING = re.compile(r"host='([^']+)', port=(\d+)")
_INCOMPLETE = re.compile(r"IncompleteRead\((\d+) bytes read, (\d+) more expected\)")


def _first_lines(text: str, count: int) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[:count])
