"""Webhooks: each kind's payload, retries with backoff, failures named without the URL.

Every request goes to a real HTTP receiver on 127.0.0.1 (webhook_receiver.py);
the waits between retries are recorded by the `sleep` the tests pass in, so
no test waits for them.
"""

from __future__ import annotations

import json
import socket
from datetime import UTC, date, datetime

import pytest
from cloudguard_schemas import validate
from named_checks import broken
from webhook_receiver import Answer, receiving

from cloudguard.notify.message import ACK_EXPIRED, NEW, NOW_FAILING, Notification, NotifiedFinding
from cloudguard.notify.payloads import SHOWN_IN_CHAT
from cloudguard.notify.send import Delivery, Webhook, deliver

SECRET_PATH = "/services/T000/B000/XXXXsecretTOKENxxxx"
NOW = datetime(2025, 6, 2, 2, 0, tzinfo=UTC)


def finding(name: str = "vm-fm7c799d-wkr-01", **changes: object) -> NotifiedFinding:
    values: dict[str, object] = dict(
        why=NEW,
        verdict="orphan",
        reasons=("no-controller-record", "fixture-task-id"),
        name=name,
        resource_id=f"/subscriptions/0000-sub/resourceGroups/pilot/providers/Microsoft.Compute/"
        f"virtualMachines/{name}",
        provider="azure",
        account="0000-sub",
        kind="vm",
        task_id="cloud-noenv-c7",
        hourly=0.172,
        accrued=10.53,
        first_seen=NOW,
    )
    values.update(changes)
    return NotifiedFinding(**values)  # type: ignore[arg-type]


def notification(
    new: tuple[NotifiedFinding, ...] = (finding(),), expired: tuple[NotifiedFinding, ...] = ()
) -> Notification:
    return Notification(NOW, "nightly", 1, "USD", new, expired, 12, 3, 1, 2)


EXPIRED = finding(
    "vm-smoke-wkr-01",
    why=ACK_EXPIRED,
    verdict="suspect",
    ack_owner="platform-team",
    ack_reason="kept for the demo",
    ack_until=date(2025, 6, 1),
)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def test_slack_gets_text_and_blocks() -> None:
    with receiving(Answer(200, b"ok")) as receiver:
        failures = deliver(
            notification(expired=(EXPIRED,)), [Webhook("slack", "team", url=receiver.url("/s"))]
        )
    assert failures == []
    (request,) = receiver.received
    assert request.headers["Content-Type"] == "application/json; charset=utf-8"
    payload = request.json()
    assert payload["text"] == "cloudguard audit: 1 new finding, 1 acknowledgement expired (exit 1)"
    kinds = [block["type"] for block in payload["blocks"]]
    assert kinds == ["header", "section", "section", "context"]
    new, expired = (block["text"]["text"] for block in payload["blocks"][1:3])
    assert new.startswith("*New (1)*\n• orphan vm-fm7c799d-wkr-01 (azure 0000-sub)")
    assert "task cloud-noenv-c7" in new and "0.1720 USD/h, ~10.53 USD accrued" in new
    assert "acknowledged by platform-team until 2025-06-01 (kept for the demo): expired" in expired
    context = payload["blocks"][3]["elements"][0]["text"]
    assert (
        context
        == "scope nightly: 12 findings, 3 failing, 1 acknowledged, 2 gone since the last audit"
    )


def test_teams_gets_an_adaptive_card_message_as_its_workflows_take() -> None:
    was = finding("vm-b", why=NOW_FAILING, previous_verdict="pending")
    with receiving(Answer(202, b"")) as receiver:  # a workflow answers 202 Accepted
        failures = deliver(notification(new=(finding(), was)), [
            Webhook("teams", "ops", url=receiver.url("/workflows/abc"))])  # fmt: skip
    assert failures == []
    payload = receiver.received[0].json()
    assert payload["type"] == "message"
    (attachment,) = payload["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert (card["type"], card["version"]) == ("AdaptiveCard", "1.4")
    texts = [block["text"] for block in card["body"]]
    assert all(block["type"] == "TextBlock" and block["wrap"] for block in card["body"])
    assert texts[0] == "cloudguard audit: 2 new findings (exit 1)"
    assert texts[1] == "New (2)"
    assert texts[2].count("\n- ") == 1 and "was pending" in texts[2]


def test_the_json_webhook_gets_the_notification_document() -> None:
    with receiving(Answer(204, b"")) as receiver:
        assert deliver(notification(expired=(EXPIRED,)), [
            Webhook("json", "relay", url=receiver.url("/hook"))]) == []  # fmt: skip
    document = validate("notification", receiver.received[0].json())
    assert document["schema"] == "cloudguard.notification" and document["schema_version"] == 1
    assert [f["name"] for f in document["new"]] == ["vm-fm7c799d-wkr-01"]
    assert document["expired"][0]["acknowledgement"] == {
        "owner": "platform-team", "reason": "kept for the demo", "until": "2025-06-01"}  # fmt: skip
    assert document["summary"] == {"findings": 12, "failing": 3, "acknowledged": 1, "gone": 2}


def test_a_failing_webhook_is_retried_with_backoff_and_retry_after() -> None:
    sleeps = Sleeps()
    answers = (Answer(500, b"oops"), Answer(429, b"rate_limited", {"Retry-After": "7"}),
               Answer(503, b""), Answer(200, b"ok"))  # fmt: skip
    with receiving(*answers) as receiver:
        failures = deliver(notification(), [Webhook("slack", "team", url=receiver.url("/s"))],
                           Delivery(retries=4, backoff=2.0), sleep=sleeps)  # fmt: skip
    assert failures == [], broken("a-busy-webhook-is-retried", f"not delivered: {failures}")
    assert len(receiver.received) == 4
    assert sleeps == [2.0, 7.0, 8.0], "doubling from 2 s; Retry-After asked for more"
    bodies = {request.body for request in receiver.received}
    assert len(bodies) == 1, "each retry sends the same message"


def test_a_retry_after_waits_at_most_a_minute() -> None:
    """docs/history.md: what Retry-After asks, at most 60 s (an hour's ask does not stall the
    nightly audit for an hour)."""
    sleeps = Sleeps()
    with receiving(Answer(429, b"slow down", {"Retry-After": "3600"}), Answer(200, b"ok")) as r:
        failures = deliver(notification(), [Webhook("slack", "team", url=r.url("/s"))],
                           sleep=sleeps)  # fmt: skip
    assert failures == [] and len(r.received) == 2, failures
    assert sleeps == [60.0], broken("a-wait-is-at-most-a-minute", f"waited {sleeps} s")


def test_a_loopback_receiver_is_never_reached_through_a_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy in the environment (a closed port here) carries nothing to a local receiver."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        proxy = f"http://127.0.0.1:{closed.getsockname()[1]}"
    for variable in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(variable, proxy)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with receiving(Answer(200, b"ok")) as receiver:
        failures = deliver(notification(), [Webhook("json", "relay", url=receiver.url("/h"))],
                           Delivery(retries=0), sleep=Sleeps())  # fmt: skip
    assert failures == [], broken("no-proxy-to-loopback", f"sent through {proxy}: {failures}")
    assert len(receiver.received) == 1


def test_a_webhook_that_keeps_failing_is_reported_by_name_never_by_url() -> None:
    sleeps = Sleeps()
    with receiving(Answer(503, f"no service at {SECRET_PATH}".encode())) as receiver:
        hook = Webhook("slack", "team-alerts", url=receiver.url(SECRET_PATH))
        failures = deliver(notification(), [hook], Delivery(retries=2), sleep=sleeps)
    assert len(receiver.received) == 3
    (failure,) = failures
    message = str(failure)
    assert message.startswith("webhook team-alerts (slack, 127.0.0.1): HTTP 503")
    assert message.endswith("(after 3 attempts)")
    assert "XXXXsecretTOKENxxxx" not in message, broken(
        "a-failure-never-names-the-url", "the URL's path is the webhook's secret"
    )
    assert sleeps == [2.0, 4.0]


def test_an_answer_that_retrying_cannot_change_is_not_retried() -> None:
    with receiving(Answer(400, b"invalid_payload")) as receiver:
        (failure,) = deliver(notification(), [Webhook("slack", "t", url=receiver.url("/s"))],
                             sleep=Sleeps())  # fmt: skip
    assert len(receiver.received) == 1
    assert failure.reason == "HTTP 400: invalid_payload"


def test_a_redirect_is_not_followed() -> None:
    with receiving() as elsewhere:
        # 303: urllib would follow it (as a GET); 307 and 308 it refuses for a POST itself.
        moved = Answer(303, b"", {"Location": elsewhere.url("/steal")})
        with receiving(moved) as receiver:
            failures = deliver(notification(), [Webhook("json", "j", url=receiver.url("/h"))],
                               sleep=Sleeps())  # fmt: skip
    assert elsewhere.received == [], broken(
        "a-redirect-is-not-followed", "a redirect was followed to where it pointed"
    )
    (failure,) = failures
    assert failure.reason.startswith("HTTP 303")


def test_an_unreachable_webhook_is_reported_after_its_retries() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    sleeps = Sleeps()
    (failure,) = deliver(notification(), [Webhook("teams", "t", url=f"http://127.0.0.1:{port}/")],
                         Delivery(retries=1), sleep=sleeps)  # fmt: skip
    assert "cannot reach it" in failure.reason and "refused" in failure.reason.lower()
    assert sleeps == [2.0]


def test_the_url_may_come_from_the_environment() -> None:
    with receiving() as receiver:
        hook = Webhook("slack", "team", url_env="TEAM_SLACK_WEBHOOK")
        environ = {"TEAM_SLACK_WEBHOOK": receiver.url(SECRET_PATH)}
        assert deliver(notification(), [hook], environ=environ) == []
        assert len(receiver.received) == 1
        (unset,) = deliver(notification(), [hook], environ={})
    assert unset.reason == "$TEAM_SLACK_WEBHOOK is not set: nothing was sent"
    assert len(receiver.received) == 1


@pytest.mark.parametrize(
    "url", ["http://hooks.example.com/services/x", "ftp://127.0.0.1/x", "https:///no-host"]
)
def test_only_https_or_a_loopback_receiver_is_sent_to(url: str) -> None:
    sleeps = Sleeps()
    (failure,) = deliver(notification(), [Webhook("json", "j", url=url)], sleep=sleeps)
    assert "must be https://" in failure.reason and "nothing was sent" in failure.reason
    assert sleeps == []


def test_names_from_the_cloud_cannot_mention_link_or_format() -> None:
    hostile = finding("<!channel> [x](https://evil.example) *y*", task_id="<@U123>")
    with receiving() as receiver:
        deliver(notification(new=(hostile,)), [
            Webhook("slack", "s", url=receiver.url("/s")),
            Webhook("teams", "t", url=receiver.url("/t")),
        ])  # fmt: skip
    slack, teams = (request.json() for request in receiver.received)
    text = slack["blocks"][1]["text"]["text"]
    card_text = teams["attachments"][0]["content"]["body"][2]["text"]
    # A bare URL or address in a name is defanged as SARIF and JUnit do: a chat links it.
    for shown in (text, card_text):
        assert "https://" not in shown and "evil.example" in shown, broken(
            "chat-urls-are-defanged", f"a cloud name's URL reached a chat as a link: {shown}"
        )
    assert "&lt; !channel&gt;" in text and "&lt; [@]U123&gt;" in text and "<!" not in text, broken(
        "slack-text-is-escaped", f"a name from the cloud reached Slack as markup: {text}"
    )
    assert "\\*y\\*" in card_text and "\\[x\\] \\(" in card_text, card_text


def test_long_lists_are_cut_in_chat_and_counted() -> None:
    many = tuple(finding(f"vm-{n:03d}") for n in range(SHOWN_IN_CHAT + 30))
    with receiving() as receiver:
        deliver(notification(new=many), [
            Webhook("slack", "s", url=receiver.url("/s")),
            Webhook("teams", "t", url=receiver.url("/t")),
            Webhook("json", "j", url=receiver.url("/j")),
        ])  # fmt: skip
    slack, teams, document = (request.json() for request in receiver.received)
    sections = [b["text"]["text"] for b in slack["blocks"] if b["type"] == "section"]
    assert all(len(text) <= 3000 for text in sections)
    assert "\n".join(sections).count("• orphan vm-") == SHOWN_IN_CHAT
    assert sections[-1].endswith("… and 30 more (see the report)")
    assert len(json.dumps(teams).encode()) < 28 * 1024, "Teams refuses messages over 28 KB"
    assert len(document["new"]) == SHOWN_IN_CHAT + 30 and document["new_not_shown"] == 0


def test_only_something_new_or_expired_is_worth_sending() -> None:
    assert not notification(new=()).worth_sending
    assert notification(new=(), expired=(EXPIRED,)).worth_sending
