"""`cloudguard audit`: parse options (and cloudguard.toml), wire the engine, print a report.

Thin on purpose: reading, classifying and rendering live in their modules.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import typer

from cloudguard import exit_codes, project_file
from cloudguard.acknowledgements import Ack, AckFileError
from cloudguard.audit import remember
from cloudguard.audit.auditor import Progress, run_audit
from cloudguard.audit.evidence import controller_records
from cloudguard.audit.inventories import Inventory
from cloudguard.audit.scope_lines import ScopeLines
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.options import AUDIT
from cloudguard.cloud.records import SourceFailure
from cloudguard.documents.findings import NEW_ONLY, UNVERIFIED, AuditReport, exit_code
from cloudguard.escape import one_line
from cloudguard.history.errors import HistoryError
from cloudguard.settings import engine_requests
from cloudguard.settings.command_line import (
    check_cloud_options,
    check_credential,
    command_class,
    with_settings,
)
from cloudguard.settings.core_options import Settings

if TYPE_CHECKING:
    from cloudguard.history.store import HistoryStore

# The formats a human reads on a terminal, which print the report's warnings themselves.
_SHOWS_WARNINGS = frozenset({"table", "markdown"})


def register_audit(app: typer.Typer) -> None:
    """Add `audit` to `app` (its docstring is the help: it lists the audit's exit codes)."""
    app.command("audit", cls=command_class(AUDIT))(audit)


@with_settings(AUDIT)
def audit(*, settings: Settings) -> None:
    """Find fleet-tagged resources of every kind no controller knows about, explain why, price them.

    Exit codes: 0 nothing found; 1 orphans or leaked resources, unverified ones
    (no evidence could judge them; unless --allow-unverified), and suspects with
    --fail-on suspect (only new ones with --fail-on new; never acknowledged
    ones); 2 usage error; 75 did not run: an inventory, evidence source or the
    history store could not be read or written, or (with [notify] fatal) a
    webhook could not be told (named on stderr); 97 invalid config.
    """
    try:
        _audit(settings)
    finally:
        gc.unfreeze()  # what the audit froze (_without_cycle_collection) is collected again


def _audit(settings: Settings) -> None:
    _live_options_need_a_provider(settings)
    _one_report_per_file(settings)
    if settings.fail_on == UNVERIFIED and settings.allow_unverified:
        raise typer.BadParameter(
            "--fail-on unverified and --allow-unverified say opposite things: keep one",
            param_hint="--allow-unverified",
        )
    clouds = settings.clouds or Clouds.installed()
    check_cloud_options(settings, clouds)
    # Each scope a live sweep reads is said as it goes (on a terminal), or once it is slow.
    scope_lines = ScopeLines(terminal=sys.stderr.isatty())
    inventories = _inventories(settings, clouds, scope_lines)
    if not inventories:
        raise typer.BadParameter(
            "nothing to audit: give --inventory FILE or --provider NAME "
            f"(or set them in the [audit] table of cloudguard.toml: {_config_used(settings)})",
            param_hint="--inventory/--provider",
        )
    records = controller_records.RECORDS.value_in(settings.extra)
    if sum(1 for v in [*settings.inventory, records] if v == "-") > 1:
        raise typer.BadParameter(
            "stdin (-) can feed only one --inventory or --controller-records",
            param_hint="-",
        )

    if settings.fail_on == NEW_ONLY and not settings.history:
        raise typer.BadParameter(
            "--fail-on new needs the history (it says what is new): drop --no-history",
            param_hint="--fail-on",
        )

    from cloudguard.audit.cost import bundled_prices
    from cloudguard.audit.formats import get_format, write_report

    now = datetime.now(UTC)
    # The store first: one that cannot be used is 75 now, not after a long sweep.
    store = engine_requests.open_history_or_exit(settings, _say) if settings.history else None
    acks = _acknowledgements(settings, store, now)
    with _progress() as progress, _without_cycle_collection():
        try:
            report = run_audit(
                inventories,
                engine_requests.evidence_request(settings),
                engine_requests.audit_policy(settings),
                bundled_prices(clouds),
                now,
                progress,
                _price_lists(settings, clouds),
            )
        finally:
            scope_lines.close()
        report = remember.apply_acknowledgements(report, acks, clouds)
        if store is not None:
            report = _remembered(
                report, store, engine_requests.history_scope(settings, clouds), clouds
            )

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
    destination = settings.output
    # A human report on the terminal shows its own warnings: once, not again on stderr.
    shown = destination is None and settings.format in _SHOWS_WARNINGS and sys.stdout.isatty()
    for warning in () if shown else report.warnings:
        typer.echo(f"cloudguard audit: warning: {one_line(warning, 500)}", err=True)
    code = exit_code(report)
    color = destination is None and settings.format == "table" and sys.stdout.isatty()
    fmt = get_format(settings.format)
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
    for name, path in settings.report:
        _write_report(path, get_format(name), report, f"--report {name}={path}", code)
    if report.failures:
        typer.echo(
            "cloudguard audit: did not run completely (exit 75): "
            "the sources above were not read, so nothing is known about them",
            err=True,
        )
    if settings.notify and settings.webhook and not _notified(report, settings):
        raise typer.Exit(exit_codes.DID_NOT_RUN)
    raise typer.Exit(code)


def _price_lists(settings: Settings, clouds: Clouds) -> Any:
    """How this audit prices (`--prices`): auto is live with a live sweep (the network is in
    use already), the cache alone for files (an audit of files does not reach out)."""
    from cloudguard.audit.price_lists import LIVE, PriceLists

    mode = settings.prices
    if mode == "auto":
        mode = LIVE if settings.provider else "cache"
    found: dict[str, Any] = {}
    warnings: list[str] = []
    for cloud in clouds.available() if mode == LIVE else ():
        try:
            found[cloud.name] = cloud.price_list(engine_requests.sweep_request(settings, cloud))
        except Exception as exc:  # a price list is never worth failing the audit
            warnings.append(f"{cloud.name} price list not used: {exc!r}")
    return PriceLists(mode, found, warnings=warnings)


def _say(message: str) -> None:
    typer.echo(f"cloudguard audit: {message}", err=True)


def _acknowledgements(settings: Settings, store: HistoryStore | None, now: datetime) -> list[Ack]:
    try:
        return remember.read_acknowledgements(settings.acks, store, now)
    except AckFileError as exc:
        typer.echo(f"cloudguard audit: invalid acknowledgements: {exc}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc
    except HistoryError as exc:
        typer.echo(f"cloudguard audit: did not run: {one_line(str(exc), 600)}", err=True)
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc


def _remembered(
    report: AuditReport, store: HistoryStore, scope: str, clouds: Clouds
) -> AuditReport:
    """`report` recorded and told what changed; a store that fails now is one more source the
    audit could not use (75, in every format), and the report is written without it."""
    try:
        with store:
            return remember.remember(report, store, scope, clouds)
    except HistoryError as exc:
        failure = SourceFailure(f"history store {exc.location}", f"{exc.reason}: not recorded")
        return replace(report, failures=(*report.failures, failure))


def _notified(report: AuditReport, settings: Settings) -> bool:
    """Tell the webhooks what is new; False when one could not be told and [notify] says
    that is fatal. Nothing new, nothing sent."""
    from cloudguard.notify.send import deliver

    news = remember.notification(report)
    if report.history is None:
        typer.echo("cloudguard audit: [notify] needs the history to tell what is new: "
                   "nothing sent (--no-history)", err=True)  # fmt: skip
        return True
    if not news.worth_sending:
        typer.echo("cloudguard audit: nothing new to notify", err=True)
        return True
    failures = deliver(news, list(settings.webhook))
    for failure in failures:
        typer.echo(f"cloudguard audit: could not notify {failure}", err=True)
    told = len(settings.webhook) - len(failures)
    typer.echo(
        f"cloudguard audit: notified {told} of {len(settings.webhook)} webhook(s): "
        f"{len(news.new)} new, {len(news.expired)} acknowledgement(s) expired",
        err=True,
    )
    if failures and settings.fatal:
        typer.echo("cloudguard audit: exit 75: [notify] fatal = true and a webhook was not told",
                   err=True)  # fmt: skip
        return False
    return True


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
            # What was built lives on until the report is written (or the audit ends): out of
            # the collector's sight until then (`audit` unfreezes it). The first collection
            # after this one would walk all of it again: 0.05 s of a 100,000-VM audit, twice
            # that with the history's records.
            gc.freeze()
            gc.enable()


def _write_output(destination: str, write: Callable[[TextIO], None]) -> None:
    """The report streamed into `destination`, a file cloudguard owns (never through a
    planted symlink or into another user's file); buffered, as it is written line by line."""
    from cloudguard.private_files import open_private

    with open(open_private(destination), "w", encoding="utf-8", buffering=1 << 20) as out:
        write(out)


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


def _config_used(settings: Settings) -> str:
    """Which cloudguard.toml these settings came from, or where none was found."""
    if settings.config_file is not None:
        return f"{settings.config_file} has no inventory or provider"
    return project_file.not_found_message(Path.cwd())


def _one_report_per_file(settings: Settings) -> None:
    # Two reports to one file: the last written would silently replace the other.
    seen: dict[Path, str] = {}
    named = [("--output", settings.output)] if settings.output else []
    named += [(f"--report {fmt}={path}", path) for fmt, path in settings.report]
    for flag, path in named:
        where = Path(path).expanduser().resolve()
        if where in seen:
            raise typer.BadParameter(
                f"{flag} writes to the same file as {seen[where]}: one report per file",
                param_hint="--report",
            )
        seen[where] = flag


def _live_options_need_a_provider(settings: Settings) -> None:
    # These steer a live sweep only: with inventory files alone they would be
    # silently ignored, and the audit would look at something else than asked.
    if settings.provider:
        return
    for name in ("subscription", "all_subscriptions", "resource_group", "region", "credential"):
        if name in settings.given and getattr(settings, name):
            flag = "--" + name.replace("_", "-")
            raise typer.BadParameter(
                f"{flag} applies to a live sweep: give --provider NAME too "
                "(an --inventory file is audited as exported)",
                param_hint=flag,
            )


def _inventories(
    settings: Settings, clouds: Clouds, scope_lines: ScopeLines | None = None
) -> list[Inventory]:
    from cloudguard.audit.inventories import LiveSweep
    from cloudguard.audit.inventory_files import STDIN, InventoryFile, inventory_problem
    from cloudguard.cloud.adapter_registry import UnknownProviderError

    for path in settings.inventory:
        if path != STDIN and (problem := inventory_problem(path)) is not None:
            raise typer.BadParameter(problem, param_hint="--inventory")
    inventories: list[Inventory] = [
        InventoryFile(path, clouds=clouds) for path in settings.inventory
    ]
    if settings.provider:
        try:
            swept = clouds.require(settings.provider)
        except UnknownProviderError as exc:
            raise typer.BadParameter(str(exc), param_hint="--provider") from exc
        check_credential(settings, clouds, [cloud.name for cloud in swept])
        inventories += [
            LiveSweep(
                cloud, replace(engine_requests.sweep_request(settings, cloud), progress=scope_lines)
            )
            for cloud in swept
        ]
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
