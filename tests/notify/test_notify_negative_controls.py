"""Negative controls: break the webhooks on purpose; the named tests must go red, each for its
own reason (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cloudguard_mutants import Mutation, assert_green_unmutated, assert_turns_red

NOTIFY = "tests/notify/test_notify.py"

MUTATIONS = [
    Mutation(
        name="a failure's message keeps the webhook's URL",
        module="notify/send.py",
        original="failures.append(NotifyFailure(label, _without(url, reason)))",
        broken="failures.append(NotifyFailure(label, reason))",
        tests=(f"{NOTIFY}::test_a_webhook_that_keeps_failing_is_reported_by_name_never_by_url",),
        reason="the URL's path is the webhook's secret",
    ),
    Mutation(
        name="redirects followed",
        module="notify/send.py",
        original="    handlers: list[Any] = [_NoRedirects()]",
        broken="    handlers: list[Any] = []",
        tests=(f"{NOTIFY}::test_a_redirect_is_not_followed",),
        reason="a redirect was followed to where it pointed",
    ),
    Mutation(
        name="a busy webhook not retried",
        module="notify/send.py",
        original="        if error.code in RETRIED_STATUSES:",
        broken="        if False:",
        tests=(f"{NOTIFY}::test_a_failing_webhook_is_retried_with_backoff_and_retry_after",),
        reason="not delivered: [NotifyFailure(webhook='webhook team (slack, 127.0.0.1)', "
        "reason='HTTP 500: oops')]",
    ),
    Mutation(
        name="names from the cloud sent to Slack unescaped",
        module="notify/payloads.py",
        original='    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")',
        broken="    return text",
        tests=(f"{NOTIFY}::test_names_from_the_cloud_cannot_mention_link_or_format",),
        reason="'&lt;!channel&gt;' in",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_webhooks_turns_their_tests_red(tmp_path: Path, mutation: Mutation) -> None:
    assert_turns_red(tmp_path, mutation)


@pytest.mark.slow
def test_the_named_tests_pass_without_a_mutation(tmp_path: Path) -> None:
    assert_green_unmutated(tmp_path, MUTATIONS)
