"""`cloudguard reap plan|apply`: parse options, wire plan/engine/log, print. Thin on purpose.

Exit codes (docs/reap.md):
0 every planned item acted on (dry run: would be) or skipped for a safety reason;
1 an action failed (or its outcome is unknown); 2 usage (bad plan, a verdict
that is never reapable); 75 did not run: an adapter, credential or evidence
source could not be read, or the reap log cannot be written — nothing is
acted on without its evidence; 97 a plan or audit report of the wrong schema
or version, or malformed; an invalid cloudguard.toml.
"""

from __future__ import annotations

import io
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from cloudguard import exit_codes
from cloudguard.audit import options as opts
from cloudguard.reap.model import REVERSIBLE, Plan, tag_value
from cloudguard.reap.plan import PlanError, PlanUsageError

app = typer.Typer(
    name="reap",
    help="Reap what the audit found, safely: plan offline, then re-verify live and act.\n\n"
    "Exit codes: 0 all reaped (or, dry run, would be) or skipped for safety; 1 an action "
    "failed; 2 usage; 75 did not run (adapter, credential or evidence unreadable); "
    "97 plan or report of the wrong schema, or malformed.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

_EVIDENCE = opts.EVIDENCE


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
            help="Verdicts to reap (repeatable; default: orphan and leaked). "
            "suspect, pending, unverified and ok are never reapable.",
        ),
    ] = None,
    action: Annotated[
        str,
        typer.Option(
            metavar="deallocate|delete",
            help="deallocate (Azure VM deallocate, EC2 stop: reversible) or delete "
            "(Azure VM/disk delete, EC2 terminate, EBS delete).",
        ),
    ] = REVERSIBLE,
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
    v1 document, or is malformed.
    """
    from cloudguard.reap.plan import build_plan, read_document, render_plan

    from_ = _report_argument(report_path, from_)
    try:
        report = read_document(from_, "audit report")
        plan = build_plan(
            report,
            source=str(from_),
            verdicts=verdict or [],
            requested_action=action,
            now=datetime.now(UTC),
        )
    except PlanUsageError as exc:
        raise typer.BadParameter(str(exc)) from exc
    except PlanError as exc:
        _say(f"refused: {exc}")
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc

    unread = report.get("failures") if isinstance(report, dict) else None
    if unread:
        # Still a valid plan for what was read; what was not read is not in it.
        _say(
            f"warning: the audit did not run completely ({len(unread)} source(s) unreadable); "
            "resources there are not in this plan"
        )
    document = render_plan(plan)
    table = plan_table(plan)
    if output is None:
        sys.stdout.write(document)
        sys.stderr.write(table)
        return
    try:
        output.write_text(document, encoding="utf-8")
    except OSError as exc:
        _say(f"cannot write --output {output}: {exc}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    sys.stdout.write(table)
    _say(f"plan written to {output}; review it, then `cloudguard reap apply {output}`")


def _report_argument(argument: Path | None, old_option: Path | None) -> Path:
    if argument is not None and old_option is not None:
        raise typer.BadParameter("give the report once, as an argument", param_hint="--from")
    if old_option is not None:
        _say("note: --from is deprecated; give the report as an argument: reap plan AUDIT.json")
        return old_option
    if argument is None:
        raise typer.BadParameter("give the audit report to plan from", param_hint="AUDIT.json")
    return argument


@app.command("apply")
def apply_command(
    plan_path: Annotated[
        Path | None,
        typer.Argument(metavar="PLAN.json", help="A reap plan.", show_default=False),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Act. Without it: re-verify and print what would be done."
        ),
    ] = False,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            "-l",
            metavar="PATH",
            help="Reap log, JSON Lines, appended (default: "
            "cloudguard-reap-<UTC timestamp>.jsonl here).",
        ),
    ] = None,
    credential: opts.Credential = None,
    management_endpoint: opts.ManagementEndpoint = None,
    ca_bundle: opts.CaBundle = None,
    controller_home: Annotated[
        str | None,
        typer.Option(
            metavar="DIR",
            help="Controller home, re-read before each item.",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    controller_records: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="Exported controller state, re-read before each item.",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    config: opts.ConfigFile = None,
) -> None:
    """Re-verify each planned item live, one at a time, and (with --yes) act on it.

    Exit codes: 0 every item reaped (dry run: would be) or skipped for a safety
    reason; 1 an action failed; 2 usage (bad plan); 75 did not run: an adapter,
    credential or evidence source could not be read, or the log cannot be
    written (nothing is acted on without its evidence); 97 the plan is not a
    cloudguard.reap.plan v1 document or is malformed, or cloudguard.toml is invalid.
    """
    from cloudguard.audit.model import SweepRequest
    from cloudguard.reap.engine import apply_plan
    from cloudguard.reap.log import ReapLog, ReapLogError, default_log_path
    from cloudguard.reap.plan import load_plan
    from cloudguard.reap.providers import open_reaper

    if plan_path is None:
        raise typer.BadParameter("give the plan to apply", param_hint="PLAN.json")
    options = _options(
        config,
        {
            "credential": credential,
            "management-endpoint": management_endpoint,
            "ca-bundle": ca_bundle,
            "controller-home": controller_home,
            "controller-records": controller_records,
        },
    )
    try:
        plan = load_plan(plan_path)
    except PlanUsageError as exc:
        raise typer.BadParameter(str(exc), param_hint="PLAN.json") from exc
    except PlanError as exc:
        _say(f"refused: {exc}")
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc
    read_tasks = _controller_evidence(options)
    _check_credential(plan, options["credential"])

    request = SweepRequest(
        credential=options["credential"],
        endpoint=options["management-endpoint"],
        ca_bundle=options["ca-bundle"],
        task_tag=plan.policy.task_tag,
    )
    path = log or default_log_path(datetime.now(UTC))
    try:
        reap_log = ReapLog(path, echo=typer.echo)
    except ReapLogError as exc:
        _say(f"did not run: {exc}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    try:
        code = apply_plan(
            plan,
            plan_path=str(plan_path),
            open_reaper=lambda name: open_reaper(name, request),
            controller_tasks=read_tasks,
            log=reap_log,
            execute=yes,
        )
    except ReapLogError as exc:  # the record failed mid-run: stop, say so
        _say(f"stopped: {exc}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    finally:
        reap_log.close()
    _say(f"log written to {path}")
    if not yes:
        _say("dry run: nothing was changed; re-run with --yes to act on the items above")
    raise typer.Exit(code)


def _check_credential(plan: Plan, credential: str | None) -> None:
    """An unknown --credential is a usage error (2) before anything is read or done."""
    from cloudguard.audit.providers import (
        UnknownCredentialError,
        check_credential,
        installed_adapters,
    )

    installed = installed_adapters()
    used = {
        item.provider: installed[item.provider] for item in plan.items if item.provider in installed
    }
    try:
        check_credential(used, credential)
    except UnknownCredentialError as exc:
        raise typer.BadParameter(str(exc), param_hint="--credential") from exc


def _options(explicit: Path | None, given: dict[str, Any]) -> dict[str, Any]:
    """Command line over the [audit] table of cloudguard.toml (the audit's own config)."""
    from_config = opts.config_values(explicit, "reap")
    merged = {key: from_config.get(key) for key in given}
    merged.update({k: v for k, v in given.items() if v is not None})
    return merged


def _controller_evidence(options: dict[str, Any]) -> Any:
    """A function that re-reads the controller evidence each time it is called."""
    from cloudguard.audit.evidence import controller_home_tasks, exported_controller_tasks

    home, records = options["controller-home"], options["controller-records"]
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

    def read() -> frozenset[str]:
        tasks: frozenset[str] = frozenset()
        if home is not None:
            tasks |= controller_home_tasks(home)
        if records is not None:
            tasks |= exported_controller_tasks(records)
        return tasks

    return read


def plan_table(plan: Plan) -> str:
    """What would be done, for a person. Names and tags come from the cloud: Text, escaped."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from cloudguard.audit.formats.text import one_line

    out = io.StringIO()
    console = Console(file=out, no_color=True, highlight=False, width=1000)
    verdicts = ", ".join(plan.verdicts)
    console.print(
        Text(
            f"cloudguard reap plan: {len(plan.items)} to {plan.requested_action} "
            f"({verdicts}) from {plan.audit_source}, "
            f"audited {plan.audit_generated_at.isoformat()}; "
            f"{len(plan.not_planned)} not planned."
        ),
        soft_wrap=True,
    )
    if plan.items:
        table = Table()
        for header in (
            "action",
            "verdict",
            "provider",
            "name",
            "group",
            "region",
            "power",
            "task id",
            "reasons",
        ):
            table.add_column(header, no_wrap=True)
        for item in plan.items:
            task = tag_value(item.provider, item.tags, plan.policy.task_tag)
            cells = (
                item.action,
                item.verdict,
                f"{item.provider} {item.kind}",
                one_line(item.name),
                one_line(item.group) if item.group else "-",
                one_line(item.region),
                item.power_state,
                one_line(task),
                ", ".join(item.reasons) or "-",
            )
            table.add_row(*(Text(c) for c in cells))
        console.print(table)
    for skipped in plan.not_planned:
        console.print(
            Text(
                f"not planned: {skipped.verdict} {one_line(skipped.name)}: "
                f"{one_line(skipped.why, 200)}"
            ),
            soft_wrap=True,
        )
    return out.getvalue()
