"""`cloudguard audit`: parse options (and cloudguard.toml), wire the engine, print a report.

Thin on purpose: reading, classifying and rendering live in their modules.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TextIO

import typer

from cloudguard import exit_codes
from cloudguard.audit import config as cfg
from cloudguard.audit import options as opts
from cloudguard.audit.engine import EvidenceSources, Progress, exit_code, run_audit
from cloudguard.audit.findings import Policy
from cloudguard.audit.formats import FORMAT_NAMES, FORMATS
from cloudguard.audit.model import Inventory, SweepRequest
from cloudguard.audit.owned_ids import DEFAULT_COMMAND_TIMEOUT

_DEFAULTS: dict[str, Any] = {
    "inventory": [],
    "provider": [],
    "subscription": [],
    "all-subscriptions": False,
    "resource-group": [],
    "region": [],
    "credential": None,
    "concurrency": SweepRequest().concurrency,
    "retries": SweepRequest().retries,
    "management-endpoint": None,
    "ca-bundle": None,
    "engine": "auto",
    "accounts-from": None,
    "assume-role": None,
    "task-tag": "task-id",
    "generation-tag": "repository-generation",
    "controller-home": None,
    "controller-records": None,
    "repo": None,
    "fixtures-from": [],
    "fixture-ids": [],
    "terraform-state": [],
    "owned-ids-command": None,
    "owned-ids-timeout": timedelta(seconds=DEFAULT_COMMAND_TIMEOUT),
    "owned-ids": [],
    "grace": timedelta(hours=2),
    "leaked-by": [],
    "format": "table",
    "output": None,
    "fail-on": "orphan",
}

_EVIDENCE, _LIVE, _REPORT = opts.EVIDENCE, opts.LIVE, opts.REPORT


def audit(
    inventory: Annotated[
        list[str] | None,
        typer.Option(
            "--inventory",
            "-i",
            metavar="FILE|-",
            help="`az vm list --show-details -o json` or `aws ec2 describe-instances` output "
            "(repeatable; - reads stdin).",
        ),
    ] = None,
    provider: Annotated[
        list[str] | None,
        typer.Option(
            "--provider",
            "-p",
            metavar="NAME",
            help="Sweep live with an installed adapter (cloudguard.adapters entry point), "
            "e.g. azure. Repeatable.",
            rich_help_panel=_LIVE,
        ),
    ] = None,
    subscription: Annotated[
        list[str] | None,
        typer.Option(
            "--subscription",
            "-s",
            metavar="ID",
            help="Subscription to sweep (repeatable; needs --provider).",
            rich_help_panel=_LIVE,
        ),
    ] = None,
    all_subscriptions: Annotated[
        bool | None,
        typer.Option(
            "--all-subscriptions/--listed-subscriptions",
            help="Sweep every subscription the credential can list.",
            rich_help_panel=_LIVE,
            show_default=False,
        ),
    ] = None,
    resource_group: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME", help="Limit to resource group (repeatable).", rich_help_panel=_LIVE
        ),
    ] = None,
    region: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="Limit to region (repeatable).", rich_help_panel=_LIVE),
    ] = None,
    credential: opts.Credential = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="Parallel requests per provider (default: 4).",
            rich_help_panel=_LIVE,
        ),
    ] = None,
    retries: opts.Retries = None,
    management_endpoint: opts.ManagementEndpoint = None,
    ca_bundle: opts.CaBundle = None,
    engine: opts.Engine = None,
    accounts_from: opts.AccountsFrom = None,
    assume_role: opts.AssumeRole = None,
    task_tag: Annotated[
        str | None,
        typer.Option(
            metavar="KEY",
            help="Tag naming the fleet task (default: task-id); untagged = not the fleet's.",
        ),
    ] = None,
    generation_tag: Annotated[
        str | None,
        typer.Option(
            metavar="KEY",
            help="Tag naming the repository generation (default: repository-generation).",
        ),
    ] = None,
    controller_home: Annotated[
        str | None,
        typer.Option(
            metavar="DIR",
            help="Controller home: state/<task>.meta, queue/<task>.json, workers/*.json.",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    controller_records: Annotated[
        str | None,
        typer.Option(
            metavar="FILE|-",
            help='Exported controller state {"tasks": [...], "workers": [...]}.',
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    repo: Annotated[
        str | None,
        typer.Option(
            metavar="PATH",
            help="Git repository whose commits generations must be.",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    fixtures_from: Annotated[
        list[str] | None,
        typer.Option(
            metavar="PATH",
            help="Test corpus: a task id found in it literally is a fixture id "
            "(repeatable) (default: <repo>/tests).",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    fixture_ids: Annotated[
        list[str] | None,
        typer.Option(
            metavar="FILE",
            help="File of known fixture ids, one a line (repeatable).",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    terraform_state: Annotated[
        list[str] | None,
        typer.Option(
            metavar="FILE",
            help="Terraform state (.tfstate, version 4) or `terraform show -json` output: "
            "a resource whose cloud id is in it is owned (repeatable).",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    owned_ids_command: Annotated[
        str | None,
        typer.Option(
            metavar="COMMAND",
            help='Command printing the cloud ids its controller owns, one {"id": ...} or '
            "JSON string a line; split into words, never run by a shell.",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    owned_ids_timeout: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            help="Kill --owned-ids-command after this long: the audit did not run (default: 60s).",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    owned_ids: Annotated[
        list[str] | None,
        typer.Option(
            metavar="FILE",
            help="File of owned cloud ids: one a line (# comments) or a JSON list (repeatable).",
            rich_help_panel=_EVIDENCE,
        ),
    ] = None,
    grace: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            help="A VM younger than this without a record is pending (default: 2h).",
        ),
    ] = None,
    leaked_by: Annotated[
        list[str] | None,
        typer.Option(
            metavar="KEY=VALUE",
            help="Any resource still carrying this tag is leaked (repeatable).",
        ),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            # Six names no longer fit the metavar column of an 80-column terminal:
            # the metavar says what goes there, the help lists the choices.
            metavar="FORMAT",
            help="|".join(FORMAT_NAMES)
            + " (default: table): "
            + "; ".join(f"{name}: {entry.summary}" for name, entry in FORMATS.items())
            + ".",
            rich_help_panel=_REPORT,
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the report here, not stdout.",
            rich_help_panel=_REPORT,
        ),
    ] = None,
    also: Annotated[
        list[str] | None,
        typer.Option(
            "--report",
            metavar="FORMAT=FILE",
            help="Also write this audit's report in FORMAT to FILE, e.g. sarif=audit.sarif "
            "(repeatable; the same findings as the main report, one sweep).",
            rich_help_panel=_REPORT,
        ),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            metavar="orphan|suspect",
            help="Exit 1 on orphans/leaked (orphan) or also on suspects (default: orphan).",
            rich_help_panel=_REPORT,
        ),
    ] = None,
    config: opts.ConfigFile = None,
) -> None:
    """Find fleet-tagged VMs no controller knows about, explain why, and price them.

    Exit codes: 0 nothing found; 1 orphans or leaked resources (and suspects
    with --fail-on suspect); 2 usage error; 75 did not run: an inventory or
    evidence source could not be read (named on stderr); 97 invalid config.
    """
    given = {
        "inventory": inventory or None,
        "provider": provider or None,
        "subscription": subscription or None,
        "all-subscriptions": all_subscriptions,
        "resource-group": resource_group or None,
        "region": region or None,
        "credential": credential,
        "concurrency": concurrency,
        "retries": retries,
        "management-endpoint": management_endpoint,
        "ca-bundle": ca_bundle,
        "engine": engine,
        "accounts-from": accounts_from,
        "assume-role": assume_role,
        "task-tag": task_tag,
        "generation-tag": generation_tag,
        "controller-home": controller_home,
        "controller-records": controller_records,
        "repo": repo,
        "fixtures-from": fixtures_from or None,
        "fixture-ids": fixture_ids or None,
        "terraform-state": terraform_state or None,
        "owned-ids-command": owned_ids_command,
        "owned-ids-timeout": owned_ids_timeout,
        "owned-ids": owned_ids or None,
        "grace": grace,
        "leaked-by": leaked_by or None,
        "format": format,
        "output": output,
        "fail-on": fail_on,
    }
    extra_reports = _extra_reports(also or [])
    options = _merge(given, opts.config_values(config, "audit"))
    _live_options_need_a_provider(options, given)
    _from_cli(options, given, "format", cfg.parse_choice(cfg.FORMATS))
    options["engine"] = _from_cli(options, given, "engine", cfg.parse_choice(cfg.ENGINES))
    options["accounts-from"] = _from_cli(
        options, given, "accounts-from", cfg.parse_choice(cfg.ACCOUNTS_FROM)
    )
    opts.check_accounts_from(options["accounts-from"], options["assume-role"])
    policy = _policy(options, given)
    inventories = _inventories(options)
    if not inventories:
        raise typer.BadParameter(
            "nothing to audit: give --inventory FILE or --provider NAME "
            "(or set them in the [audit] table of cloudguard.toml)",
            param_hint="--inventory/--provider",
        )
    if sum(1 for v in [*options["inventory"], options["controller-records"]] if v == "-") > 1:
        raise typer.BadParameter(
            "stdin (-) can feed only one --inventory or --controller-records",
            param_hint="-",
        )

    from cloudguard.audit.cost import bundled_prices
    from cloudguard.audit.formats import get_format, write_report

    sources = EvidenceSources(
        controller_home=options["controller-home"],
        controller_records=options["controller-records"],
        repo=options["repo"],
        fixtures_from=tuple(options["fixtures-from"]),
        fixture_ids=tuple(options["fixture-ids"]),
        terraform_state=tuple(options["terraform-state"]),
        owned_ids_command=_from_cli(options, given, "owned-ids-command", cfg.parse_argv),
        owned_ids_timeout=_from_cli(
            options, given, "owned-ids-timeout", cfg.parse_positive_duration
        ).total_seconds(),
        owned_ids=tuple(options["owned-ids"]),
    )
    with _progress() as progress, _without_cycle_collection():
        report = run_audit(
            inventories, sources, policy, bundled_prices(), datetime.now(UTC), progress
        )

    from cloudguard.audit.formats.text import one_line

    for failure in report.failures:
        # Reasons can quote adapter exceptions and file names: escaped, never raw.
        # A reason that lists what was tried (" | " between attempts) is shown one
        # attempt a line, so nothing is cut where it says what was tried.
        first, *attempts = failure.reason.split(" | ")[:30]
        typer.echo(
            f"cloudguard audit: could not read {one_line(failure.source, 300)}: "
            f"{one_line(first, 500)}",
            err=True,
        )
        for attempt in attempts:
            typer.echo(f"  {one_line(attempt, 300)}", err=True)
    for warning in report.warnings:
        typer.echo(f"cloudguard audit: warning: {one_line(warning, 500)}", err=True)
    code = exit_code(report)
    destination = options["output"]
    color = destination is None and options["format"] == "table" and sys.stdout.isatty()
    fmt = get_format(options["format"])
    if destination is None:
        with _without_cycle_collection():
            write_report(fmt, report, sys.stdout, color=color)
    else:
        try:
            with _without_cycle_collection():
                _write_output(destination, lambda out: write_report(fmt, report, out))
        except OSError as exc:
            typer.echo(f"cloudguard audit: cannot write --output {destination}: {exc}", err=True)
            raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
        typer.echo(f"cloudguard audit: report written to {destination} (exit {code})", err=True)
    for name, path in extra_reports:
        _write_report(path, get_format(name), report, f"--report {name}={path}", code)
    if report.failures:
        typer.echo(
            "cloudguard audit: did not run completely (exit 75): "
            "the sources above were not read, so nothing is known about them",
            err=True,
        )
    raise typer.Exit(code)


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while the audit builds its records.

    An audit allocates a few records per VM (hundreds of thousands of objects
    for a large fleet) that live until the report is written and form no
    cycles; the collector re-traversing them again and again was half the
    time of a 100,000-VM audit. Reference counting still frees everything
    else at once (a live sweep's SDK pages included), and collection resumes
    afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _write_output(destination: str, write: Callable[[TextIO], None]) -> None:
    """The report streamed into `destination`, a file cloudguard owns (never through a
    planted symlink or into another user's file); buffered, as it is written line by line."""
    from cloudguard.private_files import open_private

    with open(open_private(destination), "w", encoding="utf-8", buffering=1 << 20) as out:
        write(out)


def _extra_reports(values: list[str]) -> list[tuple[str, str]]:
    reports = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not path or name not in cfg.FORMATS:
            raise typer.BadParameter(
                f"expected FORMAT=FILE with FORMAT one of {'|'.join(cfg.FORMATS)}, got {value!r}",
                param_hint="--report",
            )
        reports.append((name, path))
    return reports


def _write_report(path: str, fmt: Any, report: Any, what: str, code: int) -> None:
    """One more rendering of the same report, as --output writes it (a file cloudguard owns)."""
    from cloudguard.audit.formats import write_report

    try:
        with _without_cycle_collection():
            _write_output(path, lambda out: write_report(fmt, report, out))
    except OSError as exc:
        typer.echo(f"cloudguard audit: cannot write {what}: {exc}", err=True)
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    typer.echo(f"cloudguard audit: report written to {path} (exit {code})", err=True)


def _live_options_need_a_provider(options: dict[str, Any], given: dict[str, Any]) -> None:
    # These steer a live sweep only: with inventory files alone they would be
    # silently ignored, and the audit would look at something else than asked.
    if options["provider"]:
        return
    for key in ("subscription", "all-subscriptions", "resource-group", "region", "credential"):
        if given.get(key):
            raise typer.BadParameter(
                f"--{key} applies to a live sweep: give --provider NAME too "
                "(an --inventory file is audited as exported)",
                param_hint=f"--{key}",
            )


def _merge(given: dict[str, Any], from_config: dict[str, Any]) -> dict[str, Any]:
    # Command line over config over defaults; a repeatable option given on the
    # command line replaces the config's list rather than extending it.
    merged = dict(_DEFAULTS)
    merged.update(from_config)
    merged.update({k: v for k, v in given.items() if v is not None})
    return merged


def _policy(options: dict[str, Any], given: dict[str, Any]) -> Policy:
    return Policy(
        task_tag=options["task-tag"],
        generation_tag=options["generation-tag"],
        grace=_from_cli(options, given, "grace", cfg.parse_duration),
        leaked_by=tuple(_from_cli(options, given, "leaked-by", cfg.parse_leaked_by)),
        fail_on=_from_cli(options, given, "fail-on", cfg.parse_choice(cfg.FAIL_ON)),
    )


def _from_cli(options: dict[str, Any], given: dict[str, Any], key: str, parser: Any) -> Any:
    """Config values and defaults arrive parsed; a command-line value is parsed
    here, and a bad one is a usage error (2), not a config error (97)."""
    value = options[key]
    if given.get(key) is None:
        return value
    try:
        return [parser(v) for v in value] if isinstance(value, list) else parser(value)
    except cfg.OptionValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"--{key}") from exc


def _inventories(options: dict[str, Any]) -> list[Inventory]:
    from cloudguard.audit.inventory_files import InventoryFile
    from cloudguard.audit.providers import (
        ProviderInventory,
        UnknownCredentialError,
        UnknownProviderError,
        check_credential,
        resolve_providers,
    )

    inventories: list[Inventory] = [InventoryFile(path) for path in options["inventory"]]
    if options["provider"]:
        try:
            entry_points = resolve_providers(options["provider"])
        except UnknownProviderError as exc:
            raise typer.BadParameter(str(exc), param_hint="--provider") from exc
        try:
            check_credential(entry_points, options["credential"])
        except UnknownCredentialError as exc:
            raise typer.BadParameter(str(exc), param_hint="--credential") from exc
        request = SweepRequest(
            subscriptions=tuple(options["subscription"]),
            all_subscriptions=options["all-subscriptions"],
            resource_groups=tuple(options["resource-group"]),
            regions=tuple(options["region"]),
            task_tag=options["task-tag"],
            credential=options["credential"],
            concurrency=options["concurrency"],
            retries=options["retries"],
            endpoint=options["management-endpoint"],
            ca_bundle=options["ca-bundle"],
            engine=options["engine"],
            accounts_from=options["accounts-from"],
            assume_role=options["assume-role"],
        )
        inventories += [ProviderInventory(name, ep, request) for name, ep in entry_points.items()]
    return inventories


@contextmanager
def _progress() -> Iterator[Progress]:
    """A progress bar on stderr, only when a person is watching (stderr is a TTY)."""
    if not sys.stderr.isatty():
        yield lambda stage, done, total: None
        return
    from rich.console import Console
    from rich.progress import Progress as Bar

    with Bar(console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        yield update
