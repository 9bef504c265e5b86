"""`cloudguard reap plan|apply`: parse options, wire plan/engine/log, print. Thin on purpose.

Exit codes (docs/reap.md):
0 every planned item acted on (dry run: would be) or skipped for a safety reason;
1 an action failed (or its outcome is unknown); 2 usage (bad plan, a verdict
that is never reapable, --yes without --approve or [reap] accounts, a plan too
old, an item outside the accounts); 75 did not run: an adapter, credential,
evidence source, lock or item could not be read, another apply holds the plan,
or the reap log cannot be written — nothing is acted on without its evidence;
97 a plan or audit report of the wrong schema or version, or malformed, or a
plan that is not the one approved; an invalid cloudguard.toml.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from cloudguard import exit_codes
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.options import REAP_APPLY
from cloudguard.cloud.reaping import REQUESTED_ACTIONS, REVERSIBLE
from cloudguard.documents.plan import REAPABLE_VERDICTS, Plan
from cloudguard.documents.plan_table import plan_table
from cloudguard.documents.strict_json import DocumentError, DocumentUsageError
from cloudguard.escape import one_line
from cloudguard.reap import admission
from cloudguard.reap.admission import Refusal
from cloudguard.settings.command_line import command_class, placed_by_hand, with_settings
from cloudguard.settings.core_options import Settings

app = typer.Typer(
    name="reap",
    help="Reap what the audit found, safely: plan offline, then re-derive live and act.\n\n"
    "Exit codes: 0 all reaped (or, dry run, would be) or skipped for safety; 1 an action "
    "failed; 2 usage; 75 did not run (adapter, credential, evidence, lock or log; an item "
    "past --item-budget, items past --deadline); "
    "97 plan or report of the wrong schema, malformed, or not the approved plan.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _starting(values: Sequence[str], incomplete: str) -> list[str]:
    """What shell completion offers: the values that start with what was typed."""
    return [value for value in values if value.startswith(incomplete)]


def _say(message: str) -> None:
    typer.echo(f"cloudguard reap: {message}", err=True)


@app.command("plan")
def plan_command(
    report_path: Annotated[
        Path | None,
        typer.Argument(
            metavar="AUDIT.json",
            help="A `cloudguard audit --format json` report.",
            show_default=False,
        ),
    ] = None,
    from_: Annotated[
        Path | None,
        typer.Option(
            "--from",
            metavar="AUDIT.json",
            hidden=True,  # the old spelling: `reap apply` takes its input the same way
            help="Deprecated: give the report as an argument, as `reap apply` takes its plan.",
        ),
    ] = None,
    verdict: Annotated[
        list[str] | None,
        typer.Option(
            metavar="orphan|leaked",
            autocompletion=lambda incomplete: _starting(REAPABLE_VERDICTS, incomplete),
            help="Verdicts to reap (repeatable; default: orphan and leaked). "
            "suspect, pending, unverified and ok are never reapable.",
        ),
    ] = None,
    action: Annotated[
        str,
        typer.Option(
            metavar="deallocate|delete",
            autocompletion=lambda incomplete: _starting(REQUESTED_ACTIONS, incomplete),
            help="deallocate (Azure VM deallocate, EC2 stop: reversible) or delete "
            "(every kind the cloud reaps: Azure resources by id and groups whole, EC2 "
            "terminate, EBS volumes, snapshots, ...; the rest is listed with its command).",
        ),
    ] = REVERSIBLE,
    with_dependents: Annotated[
        bool,
        typer.Option(
            "--with-dependents",
            help="With --action delete: after each VM's delete, delete the disks it left "
            "billing too, each re-derived live like any planned item.",
        ),
    ] = False,
    by_kind: Annotated[
        bool,
        typer.Option(
            "--by-kind",
            help="With --action delete: delete what a resource group holds one by one, then "
            "the group, rather than the group whole (it is deleted whole only when all it "
            "holds is reaped anyway).",
        ),
    ] = False,
    delete_data: Annotated[
        str | None,
        typer.Option(
            "--delete-data",
            metavar="KIND,...",
            help="With --action delete: the kinds that hold data (disk, snapshot, "
            "storage-account, bucket, database, and a cloud's own such types) to delete. "
            "Without it they are listed, not deleted: data is never destroyed by a default.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="PLAN.json",
            help="Write the plan here and the table to stdout "
            "(default: the plan to stdout, the table to stderr).",
        ),
    ] = None,
) -> None:
    """Plan what to reap from an audit report. Never touches the cloud.

    Exit codes: 0 plan written; 2 usage (a verdict that is never reapable, an
    unknown action, a missing report); 97 the report is not a cloudguard.audit
    v1 or v2 document, or is malformed. An acknowledged finding is not planned;
    nor is a kind that holds data (disk, storage account, bucket, database, ...)
    unless --delete-data names it: it is listed, with why.
    """
    from cloudguard.documents.audit_report import load_report
    from cloudguard.documents.plan import plan_digest, render_plan
    from cloudguard.private_files import write_private
    from cloudguard.reap.planning import NO_IDENTITY, build_plan

    from_ = _report_argument(report_path, from_)
    clouds = Clouds.installed()
    try:
        report = load_report(from_)
        plan = build_plan(
            report,
            source=str(from_),
            verdicts=verdict or [],
            requested_action=action,
            now=datetime.now(UTC),
            with_dependents=with_dependents,
            clouds=clouds,
            by_kind=by_kind,
            delete_data=_data_kinds(delete_data),
        )
    except DocumentUsageError as exc:
        raise typer.BadParameter(str(exc)) from exc
    except DocumentError as exc:
        _say(f"refused: {exc}")
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc

    unknown = sum(1 for skipped in plan.not_planned if skipped.why == NO_IDENTITY)
    if unknown:
        _say(
            f"warning: {unknown} finding(s) not planned: {NO_IDENTITY}; audit a fresh "
            "`az vm list --show-details -o json` (it prints vmId and timeCreated) or sweep "
            "live, then plan again"
        )
    unread = report.get("failures") if isinstance(report, dict) else None
    if unread:
        # Still a valid plan for what was read; what was not read is not in it.
        _say(
            f"warning: the audit did not run completely ({len(unread)} source(s) unreadable); "
            "resources there are not in this plan"
        )
    document = render_plan(plan)
    digest = plan_digest(document.encode("utf-8"))
    table = plan_table(plan, clouds)
    if output is None:
        sys.stdout.write(document)
        sys.stderr.write(table)
        _say(f"plan digest {digest} (apply --yes needs --approve {digest})")
        return
    try:
        write_private(output, document)  # never through a planted link, never another's file
    except OSError as exc:
        _say(f"cannot write --output {one_line(str(output), 300)}: {exc}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    sys.stdout.write(table)
    shown = one_line(str(output), 300)
    _say(
        f"plan written to {shown}, digest {digest}; review it, then "
        f"`cloudguard reap apply {shown}` (dry run) and "
        f"`cloudguard reap apply {shown} --yes --approve {digest}`"
    )


def _data_kinds(value: str | None) -> list[str]:
    """`--delete-data storage-account,bucket`: each a kind (`--kind`'s spelling)."""
    from cloudguard.cloud.kinds import parse_kind
    from cloudguard.cloud.options import OptionValueError

    try:
        return [parse_kind(part) for part in (value or "").split(",") if part.strip()]
    except OptionValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--delete-data") from exc


def _report_argument(argument: Path | None, old_option: Path | None) -> Path:
    if argument is not None and old_option is not None:
        raise typer.BadParameter("give the report once, as an argument", param_hint="--from")
    if old_option is not None:
        _say("note: --from is deprecated; give the report as an argument: reap plan AUDIT.json")
        return old_option
    if argument is None:
        raise typer.BadParameter("give the audit report to plan from", param_hint="AUDIT.json")
    return argument


@app.command("apply", cls=command_class(REAP_APPLY))
@with_settings(REAP_APPLY)
def apply_command(
    plan_path: Annotated[
        Path | None,
        typer.Argument(metavar="PLAN.json", help="A reap plan.", show_default=False),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Act. Without it: re-derive and print what would be done."
        ),
    ] = False,
    approve: Annotated[
        str | None,
        typer.Option(
            metavar="DIGEST",
            help="The plan digest `reap plan` (and the dry run) printed; required with --yes. "
            "A plan changed since it was reviewed is refused.",
        ),
    ] = None,
    # Declared with the other options (it is also [reap] max-age); placed here in --help.
    max_age: Annotated[str | None, placed_by_hand("max_age", REAP_APPLY)] = None,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            "-l",
            metavar="PATH",
            help="Reap log, JSON Lines, appended; never through a symlink, never another "
            "user's file (default: a new cloudguard-reap-<UTC timestamp>-<random>.jsonl in "
            "$XDG_STATE_HOME/cloudguard/reap-logs, else ~/.local/state/cloudguard/reap-logs).",
        ),
    ] = None,
    *,
    settings: Settings,
) -> None:
    """Re-derive each planned item live, one at a time, and (with --yes) act on it.

    The verdict is the audit's own classifier's, on the resource as read now,
    with evidence read now and the policy given here or in cloudguard.toml
    (never the plan's): the plan only narrows what may be done.

    Exit codes: 0 every item reaped (dry run: would be) or skipped for a safety
    reason; 1 an action failed; 2 usage (bad plan, no --approve, a plan too old,
    no [reap] accounts or an item outside them); 75 did not run: an adapter,
    credential, evidence source, lock or item could not be read, another apply
    (on this host, or another sharing a PostgreSQL history) holds the plan or a
    resource, the lock directory is not private, an item passed --item-budget
    (its action, if sent, not seen to finish), items were not reached by
    --deadline, or the log cannot be written (nothing is acted on after that),
    or the history store cannot be used; 97 the plan is not a
    cloudguard.reap.plan v3 or v4 document, is malformed, or is not the one
    approved; cloudguard.toml is invalid.

    Locks: one directory for every environment of the account
    (~/.cache/cloudguard/reap-locks of its home in the password database, or
    [reap] lock-directory), and the PostgreSQL history's when it is one.
    """
    from cloudguard.audit.cost import bundled_prices
    from cloudguard.audit.evidence.source_registry import locations
    from cloudguard.documents.plan import load_plan, plan_digest, read_plan_bytes
    from cloudguard.documents.reap_log import ReapLog, ReapLogError, default_log_path
    from cloudguard.reap.apply import apply_plan
    from cloudguard.reap.locks import LockError
    from cloudguard.reap.rederive import LiveAudit
    from cloudguard.settings import engine_requests
    from cloudguard.settings.command_line import check_credential

    clouds = settings.clouds or Clouds.installed()
    if plan_path is None:
        raise typer.BadParameter("give the plan to apply", param_hint="PLAN.json")
    try:
        data = read_plan_bytes(plan_path)
        plan = load_plan(plan_path, data, clouds)
    except DocumentUsageError as exc:
        raise typer.BadParameter(str(exc), param_hint="PLAN.json") from exc
    except DocumentError as exc:
        _say(f"refused: {exc}")
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc
    digest = plan_digest(data)
    if yes:
        _admitted(admission.approval(approve, digest, plan_path))
    _admitted(admission.age(plan, settings.max_age, datetime.now(UTC)))
    _admitted(admission.accounts(plan, settings.accounts, required=yes))
    _check_evidence_options(settings)
    _admitted(admission.evidence_bound(plan, locations(engine_requests.evidence_request(settings))))
    installed = [
        name for name in dict.fromkeys(i.provider for i in plan.items) if name in clouds.names
    ]
    check_credential(settings, clouds, installed)

    live_audit = LiveAudit(
        engine_requests.evidence_request(settings),
        engine_requests.audit_policy(settings),
        bundled_prices(clouds),
        lambda: datetime.now(UTC),
    )

    def open_reaper(provider: str) -> Any:
        cloud = clouds.cloud(provider)
        return cloud.reaper(engine_requests.sweep_request(settings, cloud))

    started = datetime.now(UTC)
    store = (
        engine_requests.open_history_or_exit(settings, _say) if yes and settings.history else None
    )
    try:
        path = log or default_log_path(started)
        reap_log = ReapLog(path, echo=lambda line: typer.echo(line), new=log is None)
    except ReapLogError as exc:
        _say(f"did not run: {exc}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    try:
        locks = _locks(settings, store) if yes else None
        code = apply_plan(
            plan,
            plan_path=str(plan_path),
            digest=digest,
            open_reaper=open_reaper,
            live_audit=live_audit,
            log=reap_log,
            execute=yes,
            locks=locks,
            item_budget=settings.item_budget.total_seconds(),
            deadline=_deadline(plan, settings).total_seconds(),
        )
    except LockError as exc:
        _say(f"did not run: {exc}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    except ReapLogError as exc:  # the record failed mid-run: stop, say so; nothing after it
        _say(f"stopped: {exc}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    finally:
        reap_log.close()
    _say(f"log written to {one_line(str(path), 300)}")
    if store is not None:
        code = _recorded(store, reap_log.item_records, plan, clouds, started, digest, code)
    if not yes:
        _say(
            f"dry run: nothing was changed; plan digest {digest}; to act on the items above: "
            f"cloudguard reap apply {one_line(str(plan_path), 300)} --yes --approve {digest}"
        )
    raise typer.Exit(code)


def _deadline(plan: Plan, settings: Settings) -> timedelta:
    """--deadline, else what the plan's items may take at most: one item budget each (and
    one more, for the evidence and the reapers opened before the first item)."""
    if settings.deadline is not None:
        return settings.deadline
    # --with-dependents: a VM's disks, its NIC and the NIC's public IP come after it.
    per_item = 4 if plan.with_dependents else 1
    return settings.item_budget * (len(plan.items) * per_item + 1)


def _locks(settings: Settings, store: Any) -> Any:
    """This host's lock directory (`[reap] lock-directory`, else the account's own), and the
    history store's locks when it is shared between hosts (PostgreSQL)."""
    from cloudguard.reap.locks import Locks, lock_directory

    configured = Path(settings.lock_directory) if settings.lock_directory else None
    shared = store if store is not None and store.locks_across_hosts else None
    return Locks(lock_directory(configured), shared)


def _recorded(
    store: Any, records: list[dict[str, Any]], plan: Plan, clouds: Clouds, started: datetime,
    digest: str, code: int,
) -> int:  # fmt: skip
    """Record what the apply did, as it wrote it to its log; 75 when the history could not
    keep it (the log still has it all)."""
    from cloudguard.history.errors import HistoryError
    from cloudguard.reap.recorded import reap_actions, record_apply

    try:
        with store:
            actions = reap_actions(records, plan, clouds)
            record_apply(store, actions, at=started, digest=digest, code=code)
    except HistoryError as exc:
        _say(
            f"not recorded in the history (exit 75; the reap log has it): {one_line(str(exc), 600)}"
        )
        return exit_codes.DID_NOT_RUN
    _say(f"recorded in the history {one_line(store.location, 300)}: {len(actions)} item(s)")
    return code


def _admitted(refusal: Refusal | None) -> None:
    """A rule of admission (cloudguard.reap.admission) refused: exit 2, or 97 for a plan
    that is not the one approved."""
    if refusal is None:
        return
    if refusal.kind == admission.REFUSED:
        _say(f"refused: {refusal.reason}")
        raise typer.Exit(exit_codes.REFUSED_ADMISSION)
    raise typer.BadParameter(refusal.reason, param_hint=refusal.param_hint)


def _check_evidence_options(settings: Settings) -> None:
    from cloudguard.audit.evidence import controller_records

    home = controller_records.HOME.value_in(settings.extra)
    records = controller_records.RECORDS.value_in(settings.extra)
    if home is None and records is None:
        raise typer.BadParameter(
            "reap apply re-checks that no controller record appeared since the audit: "
            "give --controller-home or --controller-records (or set them in [audit])",
            param_hint="--controller-home/--controller-records",
        )
    if records == "-":
        raise typer.BadParameter(
            "controller records are re-read before each item: give a file, not stdin",
            param_hint="--controller-records",
        )
