"""One text per channel: the shims, the provider and the pytest plugin give the same advice.

cloudguard/guard/hints.py is the only place the advice is written; these tests
require each surface to show exactly its text, not a copy of its own.
"""

from __future__ import annotations

import pytest

from cloudguard.guard import hints, reach, refuse
from cloudguard.guard.policy import Policy
from cloudguard.guard.pytest.failure import failure_message

PROVIDER = "FM_WORKER_PROVIDER_COMMAND"
CHANNELS = [
    *("botocore", "azure-core", "google-auth", "grpc", "socket"),
    *("provider", "az-shim", "aws-shim", "hard-tcp"),
]


def record(via: str) -> dict[str, object]:
    return reach.reach_record(via=via, argv=["x"], target="example", environ={})


@pytest.mark.parametrize("via", CHANNELS)
def test_the_plugin_shows_the_channels_own_advice(via: str) -> None:
    message = failure_message([record(via)], "/tmp/log.jsonl", PROVIDER)
    advice = hints.for_channel(via, variable=PROVIDER, indent="    ")
    assert f"To make the test hermetic:\n  {via}: {advice}" in message


@pytest.mark.parametrize(("via", "tool"), [("provider", "provider"), ("az-shim", "az")])
def test_the_refusers_show_the_channels_own_advice(via: str, tool: str) -> None:
    policy = Policy(provider_variables=[PROVIDER])
    advice = hints.for_channel(via, variable=PROVIDER, indent="    ")
    assert f"To make the test hermetic:\n    {advice}" in refuse._hint(via, tool, policy)


def test_each_channel_has_its_own_advice() -> None:
    texts = [hints.for_channel(via, variable=PROVIDER) for via in CHANNELS]
    assert len(set(texts)) == len(CHANNELS)
    by_via = dict(zip(CHANNELS, texts, strict=True))
    assert "fake `az`" in by_via["az-shim"] and "fake `aws`" in by_via["aws-shim"]
    assert f"{PROVIDER}=/path/to/fake-provider" in by_via["provider"]
    assert "AnonymousCredentials" in by_via["google-auth"] and "emulator" in by_via["grpc"]
    assert hints.for_channel("gcloud-sdk") == "point it at a local fake on loopback."


def test_a_hostile_via_from_the_log_is_escaped_in_the_failure_message() -> None:
    message = failure_message([record("x\x1b[2J-shim")], "/tmp/log.jsonl")
    assert "\x1b" not in message
    assert "x\\x1b[2J" in message  # the control: the via is there, escaped
