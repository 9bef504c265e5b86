"""One notification as each webhook wants it: Slack, Microsoft Teams, or our own JSON.

- **slack**: an incoming webhook's message, `text` (the fallback shown in
  notifications) plus Block Kit `blocks`: a header, sections of at most
  3,000 characters (Slack's limit per section), a context line. Values are
  escaped as Slack asks (`&`, `<`, `>`), so a VM's name cannot mention
  `@channel` or forge a link.
- **teams**: what a Teams workflow started by "When a Teams webhook request
  is received" takes (the Office 365 connectors' MessageCard is retired):
  a `message` whose one attachment is an Adaptive Card (1.4) of TextBlocks.
  Markdown punctuation in values is backslash-escaped; Teams refuses messages
  over 28 KB, so a few lines per list are shown, then how many more.
- **json**: the `cloudguard.notification` document (schema
  `notification.schema.json`), for a receiver of one's own.

Names, ids and task ids come from the cloud (whoever created the VM wrote
them): every channel shows them through one escaping, shortened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from cloudguard.escape import inert
from cloudguard.notify.message import (
    ACK_EXPIRED,
    BACK,
    NOW_FAILING,
    Notification,
    NotifiedFinding,
)
from cloudguard.schemas import schema_id

SCHEMA = "cloudguard.notification"
SCHEMA_VERSION = 1
SHOWN_IN_CHAT = 20  # findings per list in Slack and Teams; the rest are counted
SHOWN_IN_JSON = 500
SLACK_SECTION = 3000  # characters: Slack's limit for one section's text
_TEAMS_MARKDOWN = ("\\", "*", "_", "[", "]", "(", ")", "`", "~", "#", "<", ">")


def line(finding: NotifiedFinding, currency: str) -> str:
    """One finding as one plain line (escaped for a terminal, shortened, defanged: a chat
    links a bare URL or address in a cloud's name, as SARIF and JUnit viewers do)."""
    where = f"{finding.provider} {inert(finding.account, 40)}"
    parts = [f"{finding.verdict} {inert(finding.name, 80)} ({where})"]
    if finding.task_id is not None:
        parts.append(f"task {inert(finding.task_id, 60)}")
    if finding.reasons:
        parts.append(", ".join(finding.reasons))
    hourly = "unknown" if finding.hourly is None else f"{finding.hourly:.4f} {currency}"
    cost = f"{hourly}/h"
    if finding.accrued is not None:
        cost += f", ~{finding.accrued:,.2f} {currency} accrued"
    parts.append(cost)
    parts.append(_why(finding))
    return " — ".join(parts)


def _why(finding: NotifiedFinding) -> str:
    if finding.why == ACK_EXPIRED:
        until = finding.ack_until.isoformat() if finding.ack_until else "?"
        return (
            f"acknowledged by {inert(finding.ack_owner, 60)} until {until} "
            f"({inert(finding.ack_reason, 120)}): expired"
        )
    if finding.why == NOW_FAILING:
        return f"was {finding.previous_verdict}"
    if finding.why == BACK:
        return "back again"
    return "new"


def _shown(findings: tuple[NotifiedFinding, ...], limit: int) -> tuple[list[NotifiedFinding], int]:
    return list(findings[:limit]), max(len(findings) - limit, 0)


def _lists(notification: Notification) -> Iterable[tuple[str, tuple[NotifiedFinding, ...]]]:
    if notification.new:
        yield "New", notification.new
    if notification.expired:
        yield "Acknowledgement expired", notification.expired


def _chat_lines(
    notification: Notification, escape: Callable[[str], str]
) -> Iterable[tuple[str, list[str]]]:
    for heading, findings in _lists(notification):
        shown, more = _shown(findings, SHOWN_IN_CHAT)
        lines = [escape(line(f, notification.currency)) for f in shown]
        if more:
            lines.append(f"… and {more} more (see the report)")
        yield f"{heading} ({len(findings)})", lines


def slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack(notification: Notification) -> dict[str, Any]:
    title = notification.title()
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": title[:150]}}
    ]
    for heading, lines in _chat_lines(notification, slack_escape):
        text = f"*{heading}*"
        for item in lines:
            bullet = f"\n• {item}"
            if len(text) + len(bullet) > SLACK_SECTION:
                blocks.append(_slack_section(text))
                text = bullet.lstrip("\n")
            else:
                text += bullet
        blocks.append(_slack_section(text))
    context = slack_escape(notification.context())
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    return {"text": slack_escape(title), "blocks": blocks}


def _slack_section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def teams_escape(text: str) -> str:
    for mark in _TEAMS_MARKDOWN:  # the backslash first: it must not undo the others
        text = text.replace(mark, "\\" + mark)
    return text


def teams(notification: Notification) -> dict[str, Any]:
    body: list[dict[str, Any]] = [_text(notification.title(), weight="Bolder", size="Medium")]
    for heading, lines in _chat_lines(notification, teams_escape):
        body.append(_text(heading, weight="Bolder"))
        body.append(_text("\n".join(f"- {item}" for item in lines)))
    body.append(_text(teams_escape(notification.context()), isSubtle=True, size="Small"))
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
        "msteams": {"width": "Full"},
    }
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }


def _text(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def generic(notification: Notification) -> dict[str, Any]:
    document: dict[str, Any] = {
        "$schema": schema_id("notification"),
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "generated_at": notification.generated_at.isoformat(),
        "scope": notification.scope,
        "exit_code": notification.exit_code,
        "currency": notification.currency,
        "summary": {
            "findings": notification.findings,
            "failing": notification.failing,
            "acknowledged": notification.acknowledged,
            "gone": notification.gone,
        },
    }
    for key, findings in (("new", notification.new), ("expired", notification.expired)):
        shown, more = _shown(findings, SHOWN_IN_JSON)
        document[key] = [_finding_document(f) for f in shown]
        document[f"{key}_not_shown"] = more
    return document


def _finding_document(finding: NotifiedFinding) -> dict[str, Any]:
    return {
        "why": finding.why,
        "verdict": finding.verdict,
        "reasons": list(finding.reasons),
        "name": finding.name,
        "id": finding.resource_id,
        "provider": finding.provider,
        "account": finding.account,
        "kind": finding.kind,
        "task_id": finding.task_id,
        "hourly": finding.hourly,
        "accrued": finding.accrued,
        "first_seen": finding.first_seen.isoformat() if finding.first_seen else None,
        "previous_verdict": finding.previous_verdict,
        "acknowledgement": None
        if finding.ack_owner is None
        else {
            "owner": finding.ack_owner,
            "reason": finding.ack_reason,
            "until": finding.ack_until.isoformat() if finding.ack_until else None,
        },
    }


PAYLOADS: dict[str, Callable[[Notification], dict[str, Any]]] = {
    "slack": slack,
    "teams": teams,
    "json": generic,
}
