"""Shared helpers for the Azure adapter tests (pytest puts this folder on sys.path)."""

from __future__ import annotations

from typing import Any

from cloudguard_azure.adapter import AzureAdapter, RetrySettings
from cloudguard_azure.fake_arm import FakeArm

from cloudguard.cloud.records import SweepRequest

SUB_A = "0b1f6471-1bf0-4dda-aec3-111111111111"
SUB_B = "0b1f6471-1bf0-4dda-aec3-222222222222"
SUB_C = "0b1f6471-1bf0-4dda-aec3-333333333333"

# Small backoffs so retried faults cost milliseconds, not the SDK's seconds.
FAST_RETRY = RetrySettings(total=3, backoff_factor=0.01, backoff_max=0.05)


def request_for(arm: FakeArm, **overrides: Any) -> SweepRequest:
    """A sweep request addressed to the fake, with the loopback-only fake credential; for
    VMs alone (`--kind vm`, the VM engine's listings) unless `kinds` says otherwise."""
    options: dict[str, Any] = {
        "kinds": ("vm",),
        "subscriptions": (SUB_A,),
        "credential": "fake-arm",
        "endpoint": arm.base_url,
        "ca_bundle": arm.ca_pem,
    }
    options.update(overrides)
    if "engine" in options:  # the adapter's own option: delivered in its settings
        options["settings"] = {"engine": options.pop("engine")}
    return SweepRequest(**options)


def adapter() -> AzureAdapter:
    return AzureAdapter(retry=FAST_RETRY)


def sdk_options(arm: FakeArm) -> dict[str, Any]:
    # use_env_settings=False: no HTTPS_PROXY from the environment may carry loopback traffic.
    return {
        "base_url": arm.base_url,
        "connection_verify": arm.ca_pem,
        "retry_backoff_factor": 0.01,
        "use_env_settings": False,
    }
