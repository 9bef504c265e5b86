"""`cloudguard reap apply` with an in-memory cloud: the order of things, the log, exit codes."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
import reap_fake_adapter as cloud
from named_checks import broken
from reap_helpers import (
    NOW,
    audit_report,
    cli,
    controller_home,
    digest,
    entry,
    events,
    fleet,
    write_json,
)
from trusted_config import write_trusted

from cloudguard.audit.cost import bundled_prices
from cloudguard.audit.evidence.interface import EvidenceRequest
from cloudguard.cloud import adapter_registry
from cloudguard.documents.findings import AuditPolicy
from cloudguard.documents.plan import Plan, load_plan, plan_document
from cloudguard.documents.reap_log import ReapLog
from cloudguard.reap.apply import apply_plan
from cloudguard.reap.locks import Locks
from cloudguard.reap.planning import build_plan
from cloudguard.reap.rederive import LiveAudit


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> dict[str, EntryPoint]:
    adapters = {"azure": entry("FakeAdapter"), "aws": entry("FakeAws")}
    monkeypatch.setattr(adapter_registry, "installed_adapters", lambda: adapters)
    return adapters


@pytest.fixture
def setup(tmp_path: Path, installed: dict[str, EntryPoint]) -> dict[str, Path]:
    home = controller_home(tmp_path / "controller")
    resources = fleet()
    cloud.WORLD.update({r.id: r for r in resources})
    report = audit_report(resources, home)
    plan = build_plan(report, source="audit.json", verdicts=[], requested_action="delete", now=NOW)
    path = write_json(tmp_path / "plan.json", plan_document(plan))
    return {"plan": path, "home": home, "log": tmp_path / "reap.jsonl", "tmp": tmp_path}


def apply(setup: dict[str, Path], *extra: str, home: Path | None = None):
    approved = digest(setup["plan"]) if setup["plan"].exists() else "sha256:" + "0" * 64
    approve = ("--approve", approved) if "--yes" in extra else ()
    return cli(
        "reap",
        "apply",
        str(setup["plan"]),
        "--controller-home",
        str(home or setup["home"]),
        "--leaked-by",
        "run-id=ci-77",
        "--log",
        str(setup["log"]),
        *approve,
        *extra,
    )


def apply_in_process(plan: Plan, setup: dict[str, Path], home: Path | None = None) -> int:
    """The engine itself, on the fake cloud, with the controller home given."""
    log = ReapLog(setup["log"])
    live_audit = LiveAudit(
        EvidenceRequest(controller_home=str(home or setup["home"])),
        AuditPolicy(leaked_by=(("run-id", "ci-77"),)),
        bundled_prices(),
        lambda: NOW,
    )
    try:
        return apply_plan(
            plan,
            plan_path="plan.json",
            digest="sha256:" + "0" * 64,
            open_reaper=lambda name: cloud.FakeReaper(None),  # type: ignore[arg-type]
            live_audit=live_audit,
            log=log,
            execute=True,
            locks=Locks(setup["tmp"] / "run"),
        )
    finally:
        log.close()


def planned_ids(setup: dict[str, Path]) -> list[str]:
    return [item.id for item in load_plan(setup["plan"]).items]


def test_every_action_is_preceded_by_its_intent_on_disk(setup: dict[str, Path]) -> None:
    done = apply(setup, "--yes")

    assert done.exit_code == 0, done.output
    assert [a for a, _ in cloud.ACTED] == planned_ids(setup)
    log = events(setup["log"])
    assert log[0]["event"] == "start" and log[0]["schema"] == "cloudguard.reap.log"
    assert log[-1] == {**log[-1], "event": "end", "exit_code": 0}
    per_item = [e for e in log if "id" in e]
    assert [e["event"] for e in per_item] == ["intent", "done"] * len(planned_ids(setup))
    for intent, outcome in zip(per_item[::2], per_item[1::2], strict=True):
        assert intent["id"] == outcome["id"]
    assert len({e["run"] for e in log}) == 1
    assert cloud.CLOSED == ["fake", "fake"]  # one reaper per provider, both closed


def test_a_crash_mid_action_leaves_the_intent_as_evidence(setup: dict[str, Path]) -> None:
    first = planned_ids(setup)[0]
    cloud.CRASH_ON_ACT.add(first)

    with pytest.raises(cloud.Crash):  # not caught by anyone, as a kill would not be
        apply(setup, "--yes")

    assert [(e["event"], e.get("id")) for e in events(setup["log"])] == [
        ("start", None),
        ("intent", first),
    ]


def test_a_dry_run_verifies_every_item_and_acts_on_none(setup: dict[str, Path]) -> None:
    done = apply(setup)

    assert done.exit_code == 0, done.output
    assert cloud.ACTED == []
    assert planned_ids(setup) == cloud.READ
    assert {e["event"] for e in events(setup["log"])} == {"start", "would-act", "end"}
    assert "dry run: nothing was changed" in done.output


def test_a_failed_action_is_exit_1_and_the_others_still_run(setup: dict[str, Path]) -> None:
    ids = planned_ids(setup)
    cloud.ACT_FAILS.add(ids[0])

    done = apply(setup, "--yes")

    assert done.exit_code == 1, done.output
    assert [a for a, _ in cloud.ACTED] == ids[1:]
    (failed,) = [e for e in events(setup["log"]) if e["event"] == "failed"]
    assert failed["id"] == ids[0] and "HTTP 409 Conflict" in failed["detail"]


def test_an_item_that_cannot_be_read_is_not_acted_on_and_the_run_is_75(
    setup: dict[str, Path],
) -> None:
    ids = planned_ids(setup)
    cloud.READ_FAILS.add(ids[1])

    done = apply(setup, "--yes")

    assert done.exit_code == 75, done.output
    assert ids[1] not in [a for a, _ in cloud.ACTED]
    assert [e["id"] for e in events(setup["log"]) if e["event"] == "unreadable"] == [ids[1]]


def test_controller_evidence_unreadable_at_the_start_stops_everything(
    setup: dict[str, Path],
) -> None:
    shutil.rmtree(setup["home"])  # the home the plan binds is gone

    done = apply(setup, "--yes")

    assert done.exit_code == 75, done.output
    assert cloud.REQUESTS == [] and cloud.READ == [] and cloud.ACTED == []
    assert "does not exist" in done.output


def test_controller_evidence_lost_mid_run_stops_the_rest(setup: dict[str, Path]) -> None:
    plan = load_plan(setup["plan"])
    # As the second item is read, the controller home goes away.
    cloud.ON_READ[plan.items[1].id] = lambda: shutil.rmtree(setup["home"])

    code = apply_in_process(plan, setup)

    assert code == 75
    assert [a for a, _ in cloud.ACTED] == [plan.items[0].id]
    kinds = [e["event"] for e in events(setup["log"])]
    assert kinds == ["start", "intent", "done", "did-not-run"] + ["not-reached"] * (
        len(plan.items) - 2
    ) + ["end"]


def test_a_record_that_appears_mid_run_stops_that_item(setup: dict[str, Path]) -> None:
    """Evidence is re-read before each item, not only once at the start."""
    plan = load_plan(setup["plan"])
    target = next(i for i in plan.items[1:] if i.verdict == "orphan")
    record = setup["home"] / "state" / f"{target.tags['task-id']}.meta"
    cloud.ON_READ[target.id] = lambda: record.write_text("phase=running\n")

    code = apply_in_process(plan, setup)

    assert code == 0
    skipped = [e for e in events(setup["log"]) if e["event"] == "skipped"]
    assert [e["id"] for e in skipped] == [target.id], broken(
        "a-record-that-appeared-stops-it", f"was acted on (record-appeared): {skipped}"
    )
    assert [s["code"] for s in skipped[0]["skips"]] == ["verdict-changed"]
    assert "is ok now" in skipped[0]["skips"][0]["detail"]


@pytest.mark.parametrize(
    ("adapter", "message"),
    [
        ("UnavailableAdapter", "no token: tried everything"),
        ("SweepOnlyAdapter", "cannot reap (no reaper())"),
    ],
)
def test_a_reaper_that_cannot_start_stops_the_run_before_any_item(
    setup: dict[str, Path], installed: dict[str, EntryPoint], adapter: str, message: str
) -> None:
    installed["azure"] = entry(adapter)  # opened after aws (in name order)

    done = apply(setup, "--yes")

    assert done.exit_code == 75, done.output
    assert cloud.READ == [] and cloud.ACTED == []
    assert message in done.output
    assert cloud.CLOSED == ["fake"]  # the aws reaper opened first is closed


def test_a_provider_that_is_not_installed_is_75(
    setup: dict[str, Path], installed: dict[str, EntryPoint]
) -> None:
    del installed["aws"]
    done = apply(setup, "--yes")
    assert done.exit_code == 75 and "provider aws: not installed (installed: azure)" in done.output
    assert cloud.ACTED == []


def test_provider_options_reach_the_reaper(setup: dict[str, Path], tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("")  # --ca-bundle must name a readable file (checked when parsed)
    done = apply(
        setup,
        "--credential",
        "cli",
        "--management-endpoint",
        "https://127.0.0.1:9",
        "--ca-bundle",
        str(bundle),
    )
    assert done.exit_code == 0, done.output
    request = cloud.REQUESTS[0]
    assert (request.credential, request.endpoint, request.ca_bundle) == (
        "cli",
        "https://127.0.0.1:9",
        str(bundle),
    )


def test_options_come_from_the_audit_config_too(setup: dict[str, Path], _own_directory) -> None:
    write_trusted(
        _own_directory / "cloudguard.toml",
        f'[audit]\ncontroller-home = "{setup["home"]}"\ncredential = "fake-arm"\nformat = "json"\n'
        'leaked-by = ["run-id=ci-77"]\n',
    )
    done = cli("reap", "apply", str(setup["plan"]))

    assert done.exit_code == 0, done.output
    assert cloud.REQUESTS[0].credential == "fake-arm"
    logs = Path(os.environ["XDG_STATE_HOME"]) / "cloudguard" / "reap-logs"
    (log,) = logs.glob("cloudguard-reap-*.jsonl")  # the default log, in the user's state
    assert events(log)[0]["mode"] == "dry-run"


def test_an_invalid_config_is_97(setup: dict[str, Path], _own_directory) -> None:
    (_own_directory / "cloudguard.toml").write_text('[audit]\ncontroler-home = "x"\n')
    done = cli("reap", "apply", str(setup["plan"]))
    assert done.exit_code == 97 and "controler-home: unknown key" in done.output


def test_apply_without_controller_evidence_is_a_usage_error(setup: dict[str, Path]) -> None:
    done = cli("reap", "apply", str(setup["plan"]), "--yes", "--approve", digest(setup["plan"]))
    assert done.exit_code == 2 and "--controller-home" in done.output
    assert cloud.READ == []


def test_controller_records_from_stdin_are_a_usage_error(setup: dict[str, Path]) -> None:
    """Records are read again before each item: a stream read once cannot be read again."""
    done = cli(
        "reap", "apply", str(setup["plan"]), "--controller-records", "-",
        "--yes", "--approve", digest(setup["plan"]),
    )  # fmt: skip
    assert done.exit_code == 2, broken(
        "records-from-a-file-only", f"controller records from stdin were taken: {done.output}"
    )
    assert "give a file, not stdin" in done.output
    assert cloud.READ == []


def test_a_log_that_cannot_be_written_means_nothing_is_done(setup: dict[str, Path]) -> None:
    done = cli(
        "reap",
        "apply",
        str(setup["plan"]),
        "--controller-home",
        str(setup["home"]),
        "--log",
        str(setup["tmp"] / "no-such-dir" / "reap.jsonl"),
        "--yes",
        "--approve",
        digest(setup["plan"]),
    )
    assert done.exit_code == 75 and "cannot open reap log" in done.output
    assert cloud.READ == [] and cloud.ACTED == []


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        ("{", 97, "plan is not valid JSON"),
        (json.dumps({"schema": "cloudguard.audit", "schema_version": 1}), 97, "not a cloudguard"),
        (None, 2, "does not exist"),
    ],
)
def test_a_plan_that_is_not_a_plan(
    setup: dict[str, Path], content: str | None, code: int, message: str
) -> None:
    if content is None:
        setup["plan"].unlink()
    else:
        setup["plan"].write_text(content)
    done = apply(setup, "--yes")
    assert done.exit_code == code, done.output
    assert message in done.output
    assert cloud.READ == []


def test_a_hand_edited_plan_is_a_usage_error(setup: dict[str, Path]) -> None:
    document = json.loads(setup["plan"].read_text())
    document["items"][0]["verdict"] = "suspect"
    write_json(setup["plan"], document)
    done = apply(setup, "--yes")
    assert done.exit_code == 2 and "never reapable" in done.output
    assert cloud.READ == []


def test_a_vm_deallocated_since_the_plan_is_skipped_as_already_done(
    setup: dict[str, Path],
) -> None:
    plan = load_plan(setup["plan"])
    orphan = next(i for i in plan.items if i.name == "vm-orphan")
    cloud.WORLD[orphan.id] = cloud.WORLD[orphan.id]._replace(power_state="deallocated")
    document = plan_document(replace(plan, items=(replace(orphan, action="deallocate"),)))
    document["requested_action"] = "deallocate"
    write_json(setup["plan"], document)

    done = apply(setup, "--yes")

    assert done.exit_code == 0, done.output
    assert cloud.ACTED == []
    assert "already-done: already deallocated" in done.output


def test_a_vm_an_owned_id_source_now_names_is_left_alone(setup: dict[str, Path]) -> None:
    """Evidence beyond controller records counts at apply too: owned ids read now (from the
    file the audit read, which names the VM since)."""
    owned = setup["tmp"] / "owned-ids.txt"
    owned.write_text("# nothing owned yet\n")
    report = audit_report(fleet(), setup["home"], owned_ids=(str(owned),))
    plan = build_plan(report, source="audit.json", verdicts=[], requested_action="delete", now=NOW)
    write_json(setup["plan"], plan_document(plan))
    orphan = next(i for i in plan.items if i.name == "vm-orphan")
    owned.write_text(orphan.id + "\n")

    done = apply(setup, "--yes", "--owned-ids", str(owned))

    assert done.exit_code == 0, done.output
    assert orphan.id not in [a for a, _ in cloud.ACTED], "an owned VM was acted on"
    (skipped,) = [e for e in events(setup["log"]) if e.get("id") == orphan.id]
    assert [s["code"] for s in skipped["skips"]] == ["verdict-changed"], skipped


# -- the history (docs/history.md) --------------------------------------------------------


def _history() -> Any:
    import os

    from cloudguard.history.location import open_store

    return open_store(Path(os.environ["XDG_STATE_HOME"]) / "cloudguard" / "history.sqlite3")


def test_an_apply_records_each_items_outcome_in_the_history(setup: dict[str, Path]) -> None:
    ids = planned_ids(setup)
    cloud.ACT_FAILS.add(ids[0])
    assert apply(setup).exit_code == 0  # a dry run: acts on nothing, records nothing
    assert apply(setup, "--yes").exit_code == 1
    with _history() as store:
        (run,) = store.runs()
        assert (run.kind, run.findings, run.exit_code) == ("reap", len(ids), 1)
        outcomes = {
            t.display_id: [(e.what, e.change) for e in t.entries if e.kind == "reap"]
            for rid in ids
            for t in store.timeline(rid)
        }
    assert outcomes[ids[0]] == [("delete", "failed")]
    # Each in its cloud's own verb (EC2: terminate), each done.
    assert all([event for _, event in outcomes[rid]] == ["done"] for rid in ids[1:]), outcomes


def test_an_apply_whose_history_cannot_be_used_acts_on_nothing(setup: dict[str, Path]) -> None:
    config = Path.cwd() / "cloudguard.toml"  # beside [reap] accounts
    write_trusted(config, config.read_text() + '[history]\nurl-env = "NO_SUCH_VARIABLE"\n')
    done = apply(setup, "--yes")
    assert done.exit_code == 75, done.output
    assert "$NO_SUCH_VARIABLE: is not set" in done.output
    assert cloud.ACTED == []
    assert apply(setup, "--yes", "--no-history").exit_code == 0, "the control"
