"""Negative controls: break the webhooks on purpose; each named test must fail at its
named check (harness: tests/cloudguard_mutants.py)."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

NOTIFY = "tests/notify/test_notify.py"

MUTATIONS = [
    Mutation(
        name="a cloud name reaches a chat with its URL live",
        module="notify/payloads.py",
        original='    parts = [f"{finding.verdict} {inert(finding.name, 80)} ({where})"]',
        broken='    parts = [f"{finding.verdict} {finding.name} ({where})"]',
        tests=(f"{NOTIFY}::test_names_from_the_cloud_cannot_mention_link_or_format",),
        check="chat-urls-are-defanged",
    ),
    Mutation(
        name="the scope told with the inventory's local path",
        module="audit/remember.py",
        original='        scope=shared_scope(history.scope) if history is not None else "",',
        broken='        scope=history.scope if history is not None else "",',
        tests=("tests/notify/test_audit_notifies.py::test_only_news_is_told",),
        check="no-local-path-is-sent",
    ),
    Mutation(
        name="a failure's message keeps the webhook's URL",
        module="notify/send.py",
        original="failures.append(NotifyFailure(label, _without(url, reason)))",
        broken="failures.append(NotifyFailure(label, reason))",
        tests=(f"{NOTIFY}::test_a_webhook_that_keeps_failing_is_reported_by_name_never_by_url",),
        check="a-failure-never-names-the-url",
    ),
    Mutation(
        name="redirects followed",
        module="notify/send.py",
        original="    handlers: list[Any] = [_NoRedirects()]",
        broken="    handlers: list[Any] = []",
        tests=(f"{NOTIFY}::test_a_redirect_is_not_followed",),
        check="a-redirect-is-not-followed",
    ),
    Mutation(
        name="a busy webhook not retried",
        module="notify/send.py",
        original="        if error.code in RETRIED_STATUSES:",
        broken="        if False:",
        tests=(f"{NOTIFY}::test_a_failing_webhook_is_retried_with_backoff_and_retry_after",),
        check="a-busy-webhook-is-retried",
    ),
    Mutation(
        name="a Retry-After of an hour waited for in full",
        module="notify/send.py",
        original="            sleep(min(wait, delivery.max_wait))",
        broken="            sleep(wait)",
        tests=(f"{NOTIFY}::test_a_retry_after_waits_at_most_a_minute",),
        check="a-wait-is-at-most-a-minute",
    ),
    Mutation(
        name="a loopback receiver reached through the environment's proxy",
        module="notify/send.py",
        original="        handlers.append(urllib.request.ProxyHandler({}))",
        broken="        pass",
        tests=(f"{NOTIFY}::test_a_loopback_receiver_is_never_reached_through_a_proxy",),
        check="no-proxy-to-loopback",
    ),
    Mutation(
        name="names from the cloud sent to Slack unescaped",
        module="notify/payloads.py",
        original='    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")',
        broken="    return text",
        tests=(f"{NOTIFY}::test_names_from_the_cloud_cannot_mention_link_or_format",),
        check="slack-text-is-escaped",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_webhooks_turns_their_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
