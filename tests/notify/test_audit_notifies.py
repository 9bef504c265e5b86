"""`cloudguard audit` with `[notify]`: what is news reaches the webhooks, and nothing else.

Night after night against receivers on 127.0.0.1: the first audit tells
everything it found, a quiet night sends nothing, a new orphan and an
expired acknowledgement are told; no tag value, no webhook URL ever appears
in what is sent; a webhook that cannot be told is reported, and is 75 when
`[notify] fatal = true`.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from named_checks import broken
from trusted_config import write_trusted
from webhook_receiver import Answer, Receiver, receiving

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))
from audit_helpers import (
    SUBSCRIPTION,
    azure_vm,
    controller_home,
    run_audit_cli,
    write_json,
)

from cloudguard.history.location import open_store
from cloudguard.history.store_records import AuditRun, Observation, ResourceKey

VM_ID = "11111111-2222-3333-4444-555555555555"  # the vmId audit_helpers' VMs carry

SECRET_TAG = "hunter2-not-for-chat"
TOKEN = "/services/T000/B000/secretWEBHOOKtoken"


@pytest.fixture
def night(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)
    home = controller_home(tmp_path / "controller", meta=["task-0042"])

    def audit(*names: str, acks: str | None = None, args: tuple[str, ...] = ()) -> Any:
        vms = [
            azure_vm(name, tags={"task-id": "cloud-noenv-c7", "db-password": SECRET_TAG})
            for name in names
        ]
        write_json(tmp_path / "vms.json", vms)
        extra = ("--acks", acks) if acks else ()
        return run_audit_cli("-i", "vms.json", "--controller-home", str(home), *extra, *args)

    return audit


def _configure(tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch,
               fatal: bool = False, scope: str | None = None) -> None:  # fmt: skip
    monkeypatch.setenv("TEAM_SLACK_WEBHOOK", receiver.url(TOKEN))
    write_trusted(
        tmp_path / "cloudguard.toml",
        (f'[history]\nscope = "{scope}"\n' if scope else "") + "[notify]\n"
        f"fatal = {'true' if fatal else 'false'}\n"
        '[[notify.webhook]]\nkind = "slack"\nname = "team"\nurl-env = "TEAM_SLACK_WEBHOOK"\n'
        f'[[notify.webhook]]\nkind = "json"\nname = "relay"\nurl = "{receiver.url("/relay")}"\n',
    )


def _relayed(receiver: Receiver) -> list[dict[str, Any]]:
    return [r.json() for r in receiver.received if r.path == "/relay"]


def test_only_news_is_told(night: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with receiving() as receiver:
        _configure(tmp_path, receiver, monkeypatch)
        first = night("vm-a", "vm-b")
        assert first.exit_code == 1, first.stderr
        assert "notified 2 of 2 webhook(s): 2 new" in first.stderr
        (document,) = _relayed(receiver)
        assert sorted(f["name"] for f in document["new"]) == ["vm-a", "vm-b"]
        assert {f["why"] for f in document["new"]} == {"new"}

        quiet = night("vm-a", "vm-b")
        assert "nothing new to notify" in quiet.stderr
        assert len(receiver.received) == 2, "a quiet night sends nothing"

        night("vm-a", "vm-b", "vm-c")
        assert [f["name"] for f in _relayed(receiver)[-1]["new"]] == ["vm-c"]

    sent = b"".join(request.body for request in receiver.received)
    assert SECRET_TAG.encode() not in sent, broken(
        "no-tag-value-is-sent", "a tag's value reached a webhook"
    )
    assert b"secretWEBHOOKtoken" not in sent, "the webhook's own URL was sent"
    assert b"cloud-noenv-c7" in sent, "the control: the task id is sent"
    slack = [r.json() for r in receiver.received if r.path == TOKEN]
    assert slack[0]["text"].startswith("cloudguard audit: 2 new findings")
    # The scope names the inventory by its file's name, never where it lies on this machine.
    context = slack[0]["blocks"][-1]["elements"][0]["text"]
    assert str(tmp_path).encode() not in sent, broken(
        "no-local-path-is-sent", f"a local path reached a webhook: {context}"
    )
    assert "scope inventory vms.json:" in context, context


def test_an_acknowledgement_that_lapsed_since_the_last_audit_is_told_once(
    night: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vm = azure_vm("vm-a", tags=None)["id"]
    two_days_ago = datetime.now(UTC) - timedelta(days=2)
    # The previous audit, two days ago, when the acknowledgement (until yesterday) held.
    with open_store(Path(os.environ["XDG_STATE_HOME"]) / "cloudguard" / "history.sqlite3") as s:
        key = ResourceKey("azure", SUBSCRIPTION, vm.casefold(), VM_ID)
        seen = Observation(key, vm, "vm-a", "vm", "cloud-noenv-c7", "orphan", (), True, 0.172)
        s.record_audit(AuditRun(two_days_ago, "nightly", True, 0, "USD"), [seen])
    acks = tmp_path / "acks.toml"
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date()
    acks.write_text(f'[[ack]]\nid = "{vm}"\nowner = "ops"\nreason = "demo"\nuntil = {yesterday}\n')
    with receiving() as receiver:
        _configure(tmp_path, receiver, monkeypatch, scope="nightly")
        expired = night("vm-a", acks=str(acks))
        assert expired.exit_code == 1, "loud again"
        assert "0 new, 1 acknowledgement(s) expired" in expired.stderr
        (lapsed,) = _relayed(receiver)[-1]["expired"]
        assert (lapsed["name"], lapsed["acknowledgement"]["owner"]) == ("vm-a", "ops")
        night("vm-a", acks=str(acks))
        assert len(receiver.received) == 2, "told once: the next night it is no news"


def test_a_webhook_that_cannot_be_told_is_reported_and_75_when_fatal(
    night: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with receiving(Answer(404, b"no_service")) as receiver:
        _configure(tmp_path, receiver, monkeypatch)
        told = night("vm-a")
        assert told.exit_code == 1, "not fatal: the audit's own exit code"
        assert "could not notify webhook team (slack, 127.0.0.1): HTTP 404: no_service" in (
            told.stderr
        )
        assert "secretWEBHOOKtoken" not in told.stderr
        _configure(tmp_path, receiver, monkeypatch, fatal=True)
        fatal = night("vm-a", "vm-b")
        assert fatal.exit_code == 75, fatal.stderr
        assert "fatal = true and a webhook was not told" in fatal.stderr


def test_no_notify_sends_nothing(
    night: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with receiving() as receiver:
        _configure(tmp_path, receiver, monkeypatch)
        assert night("vm-a", args=("--no-notify",)).exit_code == 1
        assert receiver.received == [], "--no-notify: nothing sent"
        night("vm-a", "vm-b")
        assert len(receiver.received) == 2, "the control: vm-b is news, told to both"
