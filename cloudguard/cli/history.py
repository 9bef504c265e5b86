"""`cloudguard history` (runs, a resource's timeline, cost by month, repeat offenders,
acknowledgements) and `cloudguard ack`: the history store, asked and told directly.

Both read where the store is from the `[history]` table of cloudguard.toml
(`--config FILE`, or the nearest trusted one), as `audit` does.

Exit codes: 0 answered (or acknowledged); 2 usage (an acknowledgement without a
reason or with a date past or more than a year ahead); 75 the store cannot be
read or written; 97 invalid cloudguard.toml.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from cloudguard import exit_codes
from cloudguard.acknowledgements import Ack, AckError, parse_until, validated
from cloudguard.escape import one_line
from cloudguard.history import show
from cloudguard.history.errors import HistoryError
from cloudguard.history.store import STORE_ACK_SOURCE, HistoryStore
from cloudguard.settings.core_options import Settings
from cloudguard.settings.engine_requests import open_history_or_exit
from cloudguard.settings.resolve import HISTORY, read_config

EXIT_CODES = (
    "Exit codes: 0 answered; 2 usage; 75 the history store cannot be read or written; "
    "97 invalid cloudguard.toml."
)
# `history resource` of a resource the store never saw: no answer, as grep's 1 (not usage:
# the question was well formed).
NOT_FOUND = 1

app = typer.Typer(
    name="history",
    help="What the audits remembered: runs, a resource's timeline, cost by month, the task "
    "ids that keep leaking, acknowledgements. The store is the one [history] names.\n\n"
    + EXIT_CODES,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="Config file whose [history] table says where the store is (default: the "
        "nearest cloudguard.toml up to the repository root, then $HOME).",
    ),
]
Format = Annotated[
    str,
    typer.Option("--format", "-f", metavar="table|json", help="table (default) or json."),
]
# A bound SQLite's 64-bit integers hold (a longer one was a traceback), and more rows than
# any store has.
MAX_LIMIT = 1_000_000
Limit = Annotated[
    int,
    typer.Option(
        "--limit", "-n", metavar="N", min=1, max=MAX_LIMIT, help="How many (at most 1,000,000)."
    ),
]


def _say(message: str) -> None:
    typer.echo(f"cloudguard history: {message}", err=True)


def _store(config: Path | None, say: Callable[[str], None] = _say) -> HistoryStore:
    _, values = read_config(HISTORY, config, None)
    return open_history_or_exit(Settings(**values, command=HISTORY), say)


def _answer(
    config: Path | None,
    output: str,
    kind: str,
    ask: Callable[[HistoryStore], Sequence[Any]],
    table: Callable[[Sequence[Any]], str],
) -> None:
    if output not in ("table", "json"):
        raise typer.BadParameter(f"{output!r} is not table or json", param_hint="--format")
    store = _store(config)
    try:
        with store:
            found = ask(store)
    except HistoryError as exc:
        _say(f"did not run: {one_line(str(exc), 600)}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    sys.stdout.write(show.as_json(kind, found) if output == "json" else table(found))


@app.command("runs", help="The most recent audits and reap applies, newest first.\n\n" + EXIT_CODES)
def runs(limit: Limit = 30, output: Format = "table", config: ConfigFile = None) -> None:
    _answer(config, output, "runs", lambda store: store.runs(limit), show.runs)


@app.command(
    "resource",
    help="One resource's timeline: every audit that saw it (verdict, billable hours, cost) "
    "and every reap action on it; each incarnation apart. ID: its cloud id, or a name or "
    "the end of an id that names one resource (several: they are listed, exit 2).\n\n"
    + EXIT_CODES.replace("0 answered;", "0 answered; 1 not in the history;"),
)
def resource(
    resource_id: Annotated[
        str | None,
        typer.Argument(
            metavar="ID", help="The resource's cloud id, name or end of id.", show_default=False
        ),
    ] = None,
    output: Format = "table",
    config: ConfigFile = None,
) -> None:
    wanted = _given(resource_id)
    if output not in ("table", "json"):
        raise typer.BadParameter(f"{output!r} is not table or json", param_hint="--format")
    store = _store(config)
    try:
        with store:
            found = store.timeline(wanted)
            # Not an id the store knows: a name, or the end of an id, that names one resource.
            candidates = [] if found else store.ids_like(wanted)
            if len(candidates) == 1:
                found = store.timeline(candidates[0])
    except HistoryError as exc:
        _say(f"did not run: {one_line(str(exc), 600)}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    if len(candidates) > 1:
        _say(f"{one_line(wanted, 200)} names {len(candidates)} resources: give one's whole id")
        for candidate in candidates:
            typer.echo(f"  {one_line(candidate, 300)}", err=True)
        raise typer.Exit(exit_codes.USAGE)
    if not found:
        _say(f"no resource {one_line(wanted, 300)} in the history (by id, name or end of id)")
        raise typer.Exit(NOT_FOUND)
    sys.stdout.write(
        show.as_json("resource", found) if output == "json" else show.timelines(found, wanted)
    )


@app.command(
    "cost",
    help="The cost the audits observed accruing, per month: all findings, and what leaked.\n\n"
    + EXIT_CODES,
)
def cost(output: Format = "table", config: ConfigFile = None) -> None:
    _answer(config, output, "cost", lambda store: store.cost_by_month(), show.costs)


@app.command(
    "offenders",
    help="Repeat offenders: the task ids whose resources were found leaking, most resources "
    "first.\n\n" + EXIT_CODES,
)
def offenders(limit: Limit = 10, output: Format = "table", config: ConfigFile = None) -> None:
    _answer(config, output, "offenders", lambda store: store.offenders(limit), show.offenders)


@app.command(
    "acks",
    help="The acknowledgements made with `cloudguard ack` and not revoked, expired ones "
    "too (a reviewed --acks file is read by the audit).\n\n" + EXIT_CODES,
)
def acks(output: Format = "table", config: ConfigFile = None) -> None:
    now = datetime.now(UTC)
    _answer(config, output, "acks", lambda store: store.acks(), lambda found: _acks(found, now))


def _acks(found: Sequence[Ack], now: datetime) -> str:
    rows = [
        [one_line(a.id, 160), one_line(a.owner, 40), a.until.isoformat(),
         "expired" if a.until < now.date() else "live", one_line(a.reason, 120)]
        for a in found
    ]  # fmt: skip
    return show.table(("resource", "owner", "until", "state", "reason"), rows,
                      title=f"{len(found)} acknowledgement(s)")  # fmt: skip


def ack(
    resource_id: Annotated[
        str | None,
        typer.Argument(
            metavar="ID",
            help="The resource's cloud id, as the report shows it.",
            show_default=False,
        ),
    ] = None,
    reason: Annotated[
        str | None,
        typer.Option("--reason", metavar="TEXT", help="Why it is known and left alone."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            metavar="DATE",
            help="Acknowledged through the end of this day (UTC), YYYY-MM-DD, at most a year "
            "ahead; after it the finding is loud again.",
        ),
    ] = None,
    owner: Annotated[
        str | None,
        typer.Option("--owner", metavar="NAME", help="Who answers for it (default: you)."),
    ] = None,
    revoke: Annotated[
        bool, typer.Option("--revoke", help="End this resource's acknowledgements now.")
    ] = False,
    config: ConfigFile = None,
) -> None:
    """Acknowledge a finding: known, owned by OWNER, for REASON, until DATE. Every report
    still shows it, marked acknowledged; it fails no audit and is not reaped until then.

    Exit codes: 0 acknowledged (or revoked); 2 usage (no reason, a date past or more than a
    year ahead, --revoke with a reason or date); 75 the history store cannot be written;
    97 invalid cloudguard.toml.
    """
    now = datetime.now(UTC)
    resource_id = _given(resource_id)

    def say(message: str) -> None:
        typer.echo(f"cloudguard ack: {message}", err=True)

    if revoke and (reason or until):
        raise typer.BadParameter("--revoke ends acknowledgements: give no --reason or --until")
    if not revoke:
        made = _new_ack(resource_id, reason, until, owner, now)
    store = _store(config, say)
    try:
        with store:
            if revoke:
                ended = store.revoke_ack(resource_id, owner or getpass.getuser(), now)
                say(f"{ended} acknowledgement(s) of {one_line(resource_id, 300)} revoked")
                return
            store.add_ack(made, now)
    except HistoryError as exc:
        say(f"did not run: {one_line(str(exc), 600)}")
        raise typer.Exit(exit_codes.DID_NOT_RUN) from exc
    say(
        f"{one_line(resource_id, 300)} acknowledged by {one_line(made.owner, 80)} until "
        f"{made.until.isoformat()} (in {one_line(store.location, 300)})"
    )


def _given(resource_id: str | None) -> str:
    if not resource_id:
        raise typer.BadParameter("give the resource's id", param_hint="ID")
    return resource_id


def _new_ack(
    resource_id: str, reason: str | None, until: str | None, owner: str | None, now: datetime
) -> Ack:
    if reason is None or until is None:
        missing = "--reason" if reason is None else "--until"
        raise typer.BadParameter(f"an acknowledgement needs {missing}", param_hint=missing)
    try:
        ack = Ack(resource_id, owner or getpass.getuser(), reason, parse_until(until),
                  STORE_ACK_SOURCE)  # fmt: skip
        return validated(ack, now, new=True)
    except AckError as exc:
        raise typer.BadParameter(str(exc)) from exc


def register(parent: typer.Typer) -> None:
    """`history` and `ack` on the cloudguard command."""
    parent.add_typer(app, name="history")
    parent.command("ack")(ack)
