"""Every option of `cloudguard audit` and `cloudguard reap apply`, declared once.

`Settings` is both the declaration and the result: each field carries its
`Option` (cloudguard.audit.option_spec), and a resolved `Settings` is what a
command works with. From the declarations come the typer parameters of both
commands (`with_settings`), the `[audit]` and `[reap]` keys of
cloudguard.toml and their validation, and the defaults. Precedence:
command line > config file > default; a repeatable option given on the
command line replaces the config's list rather than extending it.

Both commands name a live provider's credential and endpoint the same way
and read the same `[audit]` table, so an operator configures the sweep once
and reaps with the same settings.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from cloudguard import exit_codes, project_file
from cloudguard.audit import config as cfg
from cloudguard.audit.formats import FORMATS
from cloudguard.audit.model import SweepRequest
from cloudguard.audit.option_spec import (
    AUDIT,
    REAP_APPLY,
    Option,
    Shown,
    declarations,
    from_command_line,
    from_config,
    given_on_command_line,
    option,
    typer_option,
    typer_parameter,
)
from cloudguard.audit.owned_ids import DEFAULT_COMMAND_TIMEOUT

if TYPE_CHECKING:
    from cloudguard.audit.engine import EvidenceSources

LIVE = "Live providers"
EVIDENCE = "Evidence"
REPORT = "Report"

_GRACE = timedelta(hours=2)
_MAX_AGE = timedelta(hours=24)
_OWNED_IDS_TIMEOUT = timedelta(seconds=DEFAULT_COMMAND_TIMEOUT)

# Which cloudguard.toml tables each command reads.
SECTIONS = {AUDIT: ("audit",), REAP_APPLY: ("audit", "reap")}


def _extra_report(value: object) -> tuple[str, str]:
    name, sep, path = cfg.string(value).partition("=")
    if not sep or not path or name not in cfg.FORMATS:
        raise cfg.OptionValueError(
            f"expected FORMAT=FILE with FORMAT one of {'|'.join(cfg.FORMATS)}, got {value!r}"
        )
    return name, path


def _leaked_by(value: object) -> tuple[str, str]:
    return cfg.parse_leaked_by(cfg.string(value))


_FORMAT_HELP = (
    "|".join(FORMATS)
    + " (default: table): "
    + "; ".join(f"{name}: {entry.summary}" for name, entry in FORMATS.items())
    + "."
)


@dataclass(frozen=True)
class Settings:
    """Resolved options. Field order is the --help order; `shown` says which commands use each."""

    inventory: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        flags=("--inventory", "-i"),
        metavar="FILE|-",
        help="`az vm list --show-details -o json` or `aws ec2 describe-instances` output "
        "(repeatable; - reads stdin).",
        many=True,
        path=True,
    )
    provider: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        flags=("--provider", "-p"),
        metavar="NAME",
        help="Sweep live with an installed adapter (cloudguard.adapters entry point), "
        "e.g. azure. Repeatable.",
        many=True,
        panel=LIVE,
    )
    subscription: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        flags=("--subscription", "-s"),
        metavar="ID",
        help="Subscription to sweep (repeatable; needs --provider).",
        many=True,
        panel=LIVE,
    )
    all_subscriptions: bool = option(
        parse=cfg.boolean,
        default=False,
        flags=("--all-subscriptions/--listed-subscriptions",),
        help="Sweep every subscription the credential can list.",
        cli_type=bool,
        panel=LIVE,
        show_default=False,
    )
    resource_group: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        metavar="NAME",
        help="Limit to resource group (repeatable).",
        many=True,
        panel=LIVE,
    )
    region: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        metavar="NAME",
        help="Limit to region (repeatable).",
        many=True,
        panel=LIVE,
    )
    credential: str | None = option(
        parse=cfg.string,
        default=None,
        metavar="NAME",
        help="Use this credential (by name).",
        apply=True,
        panel=LIVE,
    )
    concurrency: int = option(
        parse=cfg.positive_int,
        default=SweepRequest().concurrency,
        metavar="N",
        help="Parallel requests per provider (default: 4).",
        cli_type=int,
        min=1,
        panel=LIVE,
    )
    retries: int = option(
        parse=cfg.positive_int,
        default=SweepRequest().retries,
        metavar="N",
        help="Retry budget: retries per request on throttling (429), 5xx, connection resets "
        "and timeouts, with backoff; Retry-After is honoured (default: 10).",
        cli_type=int,
        min=1,
        panel=LIVE,
    )
    management_endpoint: str | None = option(
        parse=cfg.string,
        default=None,
        metavar="URL",
        help="Management endpoint override.",
        apply=True,
        panel=LIVE,
    )
    ca_bundle: str | None = option(
        parse=cfg.string,
        default=None,
        metavar="FILE",
        help="CA bundle for the endpoint.",
        apply=True,
        path=True,
        panel=LIVE,
    )
    engine: str = option(
        parse=cfg.parse_choice(cfg.ENGINES),
        default="auto",
        metavar="auto|arm|resource-graph",
        help="Azure: sweep with per-subscription ARM listings or with Resource Graph "
        "(default auto: Resource Graph above 100 subscriptions).",
        panel=LIVE,
    )
    accounts_from: str | None = option(
        parse=cfg.parse_choice(cfg.ACCOUNTS_FROM),
        default=None,
        metavar="organizations",
        help="AWS: sweep every active account of the organization (needs --assume-role).",
        panel=LIVE,
    )
    assume_role: str | None = option(
        parse=cfg.string,
        default=None,
        metavar="NAME",
        help="AWS: role assumed in each member account (arn:aws:iam::<id>:role/NAME).",
        panel=LIVE,
    )
    task_tag: str = option(
        parse=cfg.string,
        default="task-id",
        metavar="KEY",
        help="Tag naming the fleet task (default: task-id); untagged = not the fleet's.",
        apply=Shown("Tag naming the fleet task (default: task-id).", "KEY"),
    )
    generation_tag: str = option(
        parse=cfg.string,
        default="repository-generation",
        metavar="KEY",
        help="Tag naming the repository generation (default: repository-generation).",
        apply=Shown("Tag naming the generation (default: repository-generation).", "KEY"),
    )
    controller_home: str | None = option(
        parse=cfg.string,
        default=None,
        metavar="DIR",
        help="Controller home: state/<task>.meta, queue/<task>.json, workers/*.json.",
        apply=Shown("Controller home, re-read before each item.", "DIR"),
        path=True,
        panel=EVIDENCE,
    )
    controller_records: str | None = option(
        parse=cfg.string,
        default=None,
        metavar="FILE|-",
        help='Exported controller state {"tasks": [...], "workers": [...]}.',
        apply=Shown("Exported controller state, re-read before each item.", "FILE"),
        path=True,
        panel=EVIDENCE,
    )
    repo: str | None = option(
        parse=cfg.string,
        default=None,
        metavar="PATH",
        help="Git repository whose commits generations must be.",
        apply=Shown("Git repository generations must be.", "PATH"),
        path=True,
        panel=EVIDENCE,
    )
    fixtures_from: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        metavar="PATH",
        help="Test corpus: a task id found in it literally is a fixture id "
        "(repeatable) (default: <repo>/tests).",
        apply=Shown("Test corpus (repeatable).", "PATH"),
        many=True,
        path=True,
        panel=EVIDENCE,
    )
    fixture_ids: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        metavar="FILE",
        help="File of known fixture ids, one a line (repeatable).",
        apply=Shown("Known fixture ids (repeatable).", "FILE"),
        many=True,
        path=True,
        panel=EVIDENCE,
    )
    terraform_state: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        metavar="FILE",
        help="Terraform state (.tfstate, version 4) or `terraform show -json` output: "
        "a resource whose cloud id is in it is owned (repeatable).",
        apply=Shown("Terraform state: a resource whose id is in it is owned (repeatable).", "FILE"),
        many=True,
        path=True,
        panel=EVIDENCE,
    )
    owned_ids_command: tuple[str, ...] | None = option(
        parse=cfg.parse_argv,
        default=None,
        metavar="COMMAND",
        help='Command printing the cloud ids its controller owns, one {"id": ...} or '
        "JSON string a line; split into words, never run by a shell.",
        apply=Shown(
            "Command printing the cloud ids its controller owns (never a shell).", "COMMAND"
        ),
        panel=EVIDENCE,
    )
    owned_ids_timeout: timedelta = option(  # noqa: RUF009 (option() is a field specifier)
        parse=cfg.parse_positive_duration,
        default=_OWNED_IDS_TIMEOUT,
        metavar="DURATION",
        help="Kill --owned-ids-command after this long: the audit did not run (default: 60s).",
        apply=Shown("Kill --owned-ids-command after this long (default: 60s).", "DURATION"),
        panel=EVIDENCE,
    )
    owned_ids: tuple[str, ...] = option(
        parse=cfg.string,
        default=(),
        metavar="FILE",
        help="File of owned cloud ids: one a line (# comments) or a JSON list (repeatable).",
        apply=Shown("File of owned cloud ids (repeatable).", "FILE"),
        many=True,
        path=True,
        panel=EVIDENCE,
    )
    grace: timedelta = option(  # noqa: RUF009 (option() is a field specifier)
        parse=cfg.parse_duration,
        default=_GRACE,
        metavar="DURATION",
        help="A VM younger than this without a record is pending (default: 2h).",
        apply=Shown("Younger without a record: pending (default: 2h).", "DURATION"),
    )
    leaked_by: tuple[tuple[str, str], ...] = option(
        parse=_leaked_by,
        default=(),
        metavar="KEY=VALUE",
        help="Any resource still carrying this tag is leaked (repeatable).",
        apply=Shown("A resource carrying this tag is leaked.", "KEY=VALUE"),
        many=True,
    )
    format: str = option(
        parse=cfg.parse_choice(cfg.FORMATS),
        default="table",
        flags=("--format", "-f"),
        # Six names no longer fit the metavar column of an 80-column terminal:
        # the metavar says what goes there, the help lists the choices.
        metavar="FORMAT",
        help=_FORMAT_HELP,
        panel=REPORT,
    )
    output: str | None = option(
        parse=cfg.string,
        default=None,
        flags=("--output", "-o"),
        metavar="FILE",
        help="Write the report here, not stdout.",
        path=True,
        panel=REPORT,
    )
    report: tuple[tuple[str, str], ...] = option(
        parse=_extra_report,
        default=(),
        flags=("--report",),
        metavar="FORMAT=FILE",
        help="Also write this audit's report in FORMAT to FILE, e.g. sarif=audit.sarif "
        "(repeatable; the same findings as the main report, one sweep).",
        many=True,
        section=None,  # the command line only
        panel=REPORT,
    )
    fail_on: str = option(
        parse=cfg.parse_choice(cfg.FAIL_ON),
        default="orphan",
        metavar="orphan|suspect",
        help="Exit 1 on orphans/leaked (orphan) or also on suspects (default: orphan).",
        panel=REPORT,
    )
    # -- [reap]: what only `reap apply` reads --
    max_age: timedelta = option(  # noqa: RUF009 (option() is a field specifier)
        parse=cfg.parse_duration,
        default=_MAX_AGE,
        audit=False,
        apply=Shown(
            "Refuse a plan whose audit is older than this (default: 24h, or [reap] max-age).",
            "DURATION",
        ),
        section="reap",
    )
    # Subscriptions / AWS accounts reaping may act in; required for `reap apply --yes`.
    accounts: tuple[str, ...] | None = option(
        parse=cfg.string,
        default=None,
        audit=False,
        many=True,
        list_only=True,
        section="reap",
        on_command_line=False,
    )
    # Not an option: the names of the options given on the command line.
    given: frozenset[str] = field(default=frozenset())


OPTIONS: tuple[Option, ...] = declarations(Settings)
_BY_NAME = {declared.name: declared for declared in OPTIONS}


def config_keys(section: str) -> tuple[str, ...]:
    """The keys of one cloudguard.toml table, in declaration order."""
    return tuple(o.key for o in OPTIONS if o.section == section)


def command_options(command: str) -> tuple[Option, ...]:
    """The options `command` takes on its command line, in --help order."""
    return tuple(o for o in OPTIONS if command in o.shown and o.on_command_line)


def placed_by_hand(name: str, command: str) -> Any:
    """The `typer.Option` of one option, for a command that places it itself in --help:
    `max_age: Annotated[str | None, placed_by_hand("max_age", REAP_APPLY)] = None`."""
    return typer_option(_BY_NAME[name], command)


def evidence_sources(settings: Settings) -> EvidenceSources:
    """The evidence options as the engine reads them (the audit's, and `reap apply`'s re-reads)."""
    from cloudguard.audit.engine import EvidenceSources

    return EvidenceSources(
        controller_home=settings.controller_home,
        controller_records=settings.controller_records,
        repo=settings.repo,
        fixtures_from=settings.fixtures_from,
        fixture_ids=settings.fixture_ids,
        terraform_state=settings.terraform_state,
        owned_ids_command=settings.owned_ids_command,
        owned_ids_timeout=settings.owned_ids_timeout.total_seconds(),
        owned_ids=settings.owned_ids,
    )


ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="Config file whose \\[audit] table supplies these options "
        "(default: the nearest cloudguard.toml up to the repository root, then $HOME; "
        "only your own file, not writable by others).",
    ),
]

Function = TypeVar("Function", bound=Callable[..., Any])


def with_settings(command: str) -> Callable[[Function], Function]:
    """Give `function` the typer parameters of `command`'s options and call it with `settings`.

    Its own parameters stay where they are; the derived ones (and --config)
    take the place of its `settings` parameter. An option it declares itself
    (to place it in --help) is resolved like the others.
    """

    def decorate(function: Function) -> Function:
        signature = inspect.signature(function, eval_str=True)
        own = list(signature.parameters.values())
        at = [p.name for p in own].index("settings")
        derived = [
            typer_parameter(o, command)
            for o in command_options(command)
            if o.name not in signature.parameters
        ]
        config = inspect.Parameter(
            "config", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ConfigFile
        )
        names = {o.name for o in command_options(command)}

        @functools.wraps(function)
        def run(**arguments: Any) -> Any:
            config_path = arguments.pop("config")
            given = {name: arguments.pop(name) for name in names if name in arguments}
            return function(settings=resolve(command, given, config_path), **arguments)

        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*own[:at], *derived, config, *own[at + 1 :]]
        )
        return run  # type: ignore[return-value]

    return decorate


def resolve(command: str, given: Mapping[str, Any], config_path: Path | None) -> Settings:
    """Defaults, then cloudguard.toml (97 when invalid), then the command line (2 when bad)."""
    values = read_config(command, config_path)
    on_command_line = {
        name: from_command_line(_BY_NAME[name], value)
        for name, value in given.items()
        if given_on_command_line(value)
    }
    values.update(on_command_line)
    return Settings(**values, given=frozenset(on_command_line))


def read_config(command: str, explicit: Path | None) -> dict[str, Any]:
    """The validated tables `command` reads, of `explicit` or the nearest cloudguard.toml."""
    label = command.split()[0]
    try:
        path = explicit if explicit is not None else cfg.find_config(Path.cwd())
        if path is None:
            return {}
        if explicit is not None and not explicit.is_file():
            raise cfg.ConfigError(str(explicit), "--config file does not exist")
        try:
            document = project_file.read_project_file(path)
        except project_file.ProjectFileError as exc:
            raise cfg.ConfigError(str(exc.path), exc.message) from exc
        values: dict[str, Any] = {}
        for section in SECTIONS[command]:
            values.update(section_values(document, section))
        return values
    except cfg.ConfigError as exc:
        typer.echo(f"cloudguard {label}: invalid config: {exc}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from exc


def section_values(document: project_file.ProjectDocument, section: str) -> dict[str, Any]:
    """One table's values by option name; a bad key or value is a ConfigError naming it."""
    try:
        table = document.section(section)
    except project_file.ProjectFileError as exc:
        raise cfg.ConfigError(str(exc.path), exc.message) from exc
    known = {o.key: o for o in OPTIONS if o.section == section}
    values: dict[str, Any] = {}
    for key, raw in table.items():
        where = f"{document.path}: {section}.{key}"
        declared = known.get(key)
        if declared is None:
            raise cfg.ConfigError(where, cfg.unknown_key(key, known))
        try:
            values[declared.name] = from_config(declared, raw, document.path.parent)
        except cfg.OptionValueError as exc:
            raise cfg.ConfigError(where, str(exc)) from exc
    return values


def check_accounts_from(accounts_from: str | None, assume_role: str | None) -> None:
    """--accounts-from and --assume-role go together; either alone is a usage error (2)."""
    if accounts_from is not None and not assume_role:
        raise typer.BadParameter(
            "--accounts-from organizations needs --assume-role NAME: the role to assume in "
            "each member account",
            param_hint="--assume-role",
        )
    if assume_role and accounts_from is None:
        raise typer.BadParameter(
            "--assume-role is used with --accounts-from organizations", param_hint="--assume-role"
        )
