"""One AWS session: what the sweep, the organization sweep and the reaper all need.

The boto3 session (`--credential PROFILE`, or boto3's own chain), the check
that it has credentials at all (one failure naming the chain tried), the
client options (`--management-endpoint`, `--ca-bundle`, the retry budget),
the enabled regions (the default scope) and the one-line description of a
botocore error. The sweep (cloudguard_aws.adapter, organizations) and the
reaper import this module; it imports neither. boto3 is imported inside the
functions.
"""

from __future__ import annotations

import threading
from typing import Any

from cloudguard.cloud.records import SweepRequest

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
    import boto3

    return boto3.Session(profile_name=request.credential) if request.credential else boto3.Session()


# boto3 sessions are not thread-safe, clients are: the sweeps make clients from one session
# in several threads, so making a client is serialised and using it is not.
_CLIENT_CREATION = threading.Lock()


def make_client(session: Any, request: SweepRequest, service: str, region: str) -> Any:
    from botocore.config import Config

    with _CLIENT_CREATION:
        return session.client(
            service,
            region_name=region,
            endpoint_url=request.endpoint,
            verify=request.ca_bundle,
            config=Config(retries=retry_config(request)),
        )


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
