"""The core's own options of `audit` and `reap apply`, and who owns every other option.

`Settings` is both the declaration and the result: each field carries its
`Option` (cloudguard.cloud.options), and a resolved `Settings` is what a
command works with. The core declares only what every cloud and every audit
has; an evidence source declares its own options in its module
(cloudguard.audit.evidence), an adapter in `CloudAdapter.options`. All of
them become flags of the commands that show them and keys of cloudguard.toml
(cloudguard.settings.command_line, cloudguard.settings.resolve), and their
values reach their owner by name (`Settings.extra`, turned into requests in
cloudguard.settings.engine_requests). Precedence: command line > config file >
default; a repeatable option given on the command line replaces the config's
list rather than extending it.

Both commands name a live provider's credential and endpoint the same way
and read the same `[audit]` table, so an operator configures the sweep once
and reaps with the same settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cloudguard.audit.evidence.source_registry import evidence_options
from cloudguard.audit.formats import FORMAT_NAMES, FORMATS
from cloudguard.cloud.adapter_registry import Clouds, installed_adapters, installed_clouds
from cloudguard.cloud.kinds import SHORT_KINDS, VM, parse_kind
from cloudguard.cloud.options import (
    LIVE_PANEL,
    NeedsTrust,
    Option,
    OptionValueError,
    Shown,
    boolean,
    choice,
    parse_duration,
    parse_positive_duration,
    positive_int,
    readable_file,
    string,
)
from cloudguard.cloud.records import SweepRequest
from cloudguard.documents.findings import parse_leaked_by
from cloudguard.history.sqlite import DEFAULT_BUSY_TIMEOUT
from cloudguard.settings.history_values import non_empty, postgresql_url, variable_name, webhook
from cloudguard.settings.option_spec import declarations, option

if TYPE_CHECKING:
    from cloudguard.notify.send import Webhook

REPORT_PANEL = "Report"
HISTORY_PANEL = "History and notifications"

# Which verdicts fail the audit (--fail-on).
FAIL_ON = ("orphan", "suspect", "unverified", "new")
# Where prices come from (cloudguard.audit.price_lists).
PRICE_MODES = ("auto", "live", "cache", "bundled")

_GRACE = timedelta(hours=2)
_MAX_AGE = timedelta(hours=24)
# One item of `reap apply`: its live reads, retries and their waits included. azure-core's
# default budget could hold one item whose every read fails for minutes.
_ITEM_BUDGET = timedelta(minutes=5)


def _reported(why: str) -> NeedsTrust:
    """A key that describes the project's fleet, and so can hide a finding: from an
    untrusted discovered file it applies, and the report head and the plan name it."""
    return NeedsTrust(why, reported=True)


def _extra_report(value: object) -> tuple[str, str]:
    name, sep, path = string(value).partition("=")
    if not sep or not path or name not in FORMAT_NAMES:
        raise OptionValueError(
            f"expected FORMAT=FILE with FORMAT one of {'|'.join(FORMAT_NAMES)}, got {value!r}"
        )
    return name, path


def _providers() -> list[str]:
    return sorted(installed_adapters())


def _credentials() -> list[str]:
    clouds = installed_clouds()
    return sorted({name for cloud in clouds.available() for name in cloud.credential_names or ()})


def _reports() -> list[str]:
    return [f"{name}=" for name in FORMAT_NAMES]


def _tag_name(value: object) -> str:
    # An empty (or blank) tag name matches no resource: every VM would be "not the fleet's",
    # and the audit clean.
    name = string(value)
    if not name.strip():
        raise OptionValueError(f"expected a tag name, got {value!r}")
    return name


def _leaked_by(value: object) -> tuple[str, str]:
    return parse_leaked_by(string(value))


_FORMAT_HELP = (
    # Listed with spaces, not "a|b|c": a help column of an 80-column terminal wraps at them.
    f"{', '.join(list(FORMATS)[:-1])} or {list(FORMATS)[-1]} (default: table): "
    + "; ".join(f"{name}: {entry.summary}" for name, entry in FORMATS.items())
    + "."
)


@dataclass(frozen=True)
class Settings:
    """Resolved options. Field order is the --help order; `shown` says which commands use each."""

    inventory: tuple[str, ...] = option(
        parse=string,
        default=(),
        flags=("--inventory", "-i"),
        metavar="FILE|-",
        help="An export, told apart by its shape: `az vm list --show-details`, `az resource "
        "list`, `az group list`, `az graph query` (-o json each), `aws ec2 "
        "describe-instances` (or its flat --query forms), `aws resourcegroupstaggingapi "
        "get-resources` (repeatable; - reads stdin; docs/audit.md lists them).",
        many=True,
        path=True,
    )
    provider: tuple[str, ...] = option(
        trust=NeedsTrust("sweeps these clouds live with your credentials"),
        parse=string,
        default=(),
        flags=("--provider", "-p"),
        metavar="NAME",
        help="Sweep live with an installed adapter (cloudguard.adapters entry point), "
        "e.g. azure. Repeatable.",
        many=True,
        panel=LIVE_PANEL,
        complete=_providers,
    )
    subscription: tuple[str, ...] = option(
        trust=NeedsTrust("chooses what your credentials read"),
        parse=string,
        default=(),
        flags=("--subscription", "-s"),
        metavar="ID",
        help="Subscription to sweep (repeatable; needs --provider).",
        many=True,
        panel=LIVE_PANEL,
    )
    all_subscriptions: bool = option(
        trust=NeedsTrust("reads every subscription your credentials can list"),
        parse=boolean,
        default=False,
        flags=("--all-subscriptions/--listed-subscriptions",),
        help="Sweep every subscription the credential can list.",
        cli_type=bool,
        panel=LIVE_PANEL,
        show_default=False,
    )
    resource_group: tuple[str, ...] = option(
        trust=_reported("narrows what is audited: what it leaves out is never judged"),
        parse=string,
        default=(),
        metavar="NAME",
        help="Limit to resource group (repeatable).",
        many=True,
        panel=LIVE_PANEL,
    )
    region: tuple[str, ...] = option(
        trust=_reported("narrows what is audited: what it leaves out is never judged"),
        parse=string,
        default=(),
        metavar="NAME",
        help="Limit to region (repeatable).",
        many=True,
        panel=LIVE_PANEL,
    )
    kind: tuple[str, ...] = option(
        trust=_reported("narrows what is audited: what it leaves out is never judged"),
        parse=parse_kind,
        default=(),
        metavar="KIND",
        help="Audit only this kind of resource (repeatable): "
        + ", ".join(SHORT_KINDS)
        + ", or a cloud's own type (microsoft.web/sites, sqs:queue); default: every kind.",
        many=True,
    )
    credential: str | None = option(
        trust=NeedsTrust("chooses which of your identities is used"),
        parse=string,
        default=None,
        metavar="NAME",
        help="Use this credential (by name).",
        apply=True,
        panel=LIVE_PANEL,
        complete=_credentials,
    )
    concurrency: int = option(
        parse=positive_int,
        default=SweepRequest().concurrency,
        metavar="N",
        help="Parallel requests per provider (default: 4).",
        cli_type=int,
        min=1,
        panel=LIVE_PANEL,
    )
    retries: int = option(
        parse=positive_int,
        default=SweepRequest().retries,
        metavar="N",
        help="Retry budget: retries per request on throttling (429), 5xx, connection resets "
        "and timeouts, with backoff; Retry-After is honoured (default: 10).",
        apply=Shown(
            "Retry budget per read (429, 5xx, resets, timeouts); actions are never "
            "retried (default: 10).",
            "N",
        ),
        cli_type=int,
        min=1,
        panel=LIVE_PANEL,
    )
    management_endpoint: str | None = option(
        trust=NeedsTrust("chooses where your credentials are sent"),
        parse=string,
        default=None,
        metavar="URL",
        help="Management endpoint override.",
        apply=True,
        panel=LIVE_PANEL,
    )
    ca_bundle: str | None = option(
        trust=NeedsTrust("chooses which certificate authorities vouch for the endpoint"),
        parse=string,
        default=None,
        metavar="FILE",
        help="CA bundle for the endpoint (a readable PEM file).",
        apply=True,
        path=True,
        check=readable_file,
        panel=LIVE_PANEL,
    )
    task_tag: str = option(
        trust=_reported("names the fleet's tag: a resource without it is not the fleet's"),
        parse=_tag_name,
        default="task-id",
        metavar="KEY",
        help="Tag naming the fleet task (default: task-id); untagged = not the fleet's.",
        apply=Shown("Tag naming the fleet task (default: task-id).", "KEY"),
    )
    generation_tag: str = option(
        trust=_reported("names the generation tag the generation check reads"),
        parse=_tag_name,
        default="repository-generation",
        metavar="KEY",
        help="Tag naming the repository generation (default: repository-generation).",
        apply=Shown("Tag naming the generation (default: repository-generation).", "KEY"),
    )
    require_generation: tuple[str, ...] = option(
        trust=_reported("chooses which kinds are suspect without a generation tag"),
        parse=parse_kind,
        default=(VM,),
        metavar="KIND",
        help="A fleet resource of this kind without a generation tag is suspect (repeatable; "
        "default: vm; naming kinds replaces it). Other kinds are judged without one.",
        apply=Shown("Kinds that must carry a generation tag (default: vm).", "KIND"),
        many=True,
    )
    grace: timedelta = option(  # noqa: RUF009 (option() is a field specifier)
        trust=_reported("how long a resource without a record is pending, not an orphan"),
        parse=parse_duration,
        default=_GRACE,
        metavar="DURATION",
        help="A VM younger than this without a record is pending (default: 2h).",
        apply=Shown("Younger without a record: pending (default: 2h).", "DURATION"),
    )
    leaked_by: tuple[tuple[str, str], ...] = option(
        # Ignored while untrusted: it widens what reaping may delete (an ops bastion).
        trust=NeedsTrust("marks resources leaked, which reaping deletes", ignored=True),
        parse=_leaked_by,
        default=(),
        metavar="KEY=VALUE",
        help="Any resource still carrying this tag is leaked (repeatable).",
        apply=Shown("A resource carrying this tag is leaked.", "KEY=VALUE"),
        many=True,
    )
    format: str = option(
        parse=choice(FORMAT_NAMES),
        default="table",
        flags=("--format", "-f"),
        # Six names no longer fit the metavar column of an 80-column terminal:
        # the metavar says what goes there, the help lists the choices.
        metavar="FORMAT",
        help=_FORMAT_HELP,
        panel=REPORT_PANEL,
    )
    output: str | None = option(
        # Ignored while untrusted: the report goes to stdout, the same report elsewhere.
        trust=NeedsTrust("chooses which of your files the report overwrites", ignored=True),
        parse=string,
        default=None,
        flags=("--output", "-o"),
        metavar="FILE",
        help="Write the report here, not stdout.",
        path=True,
        panel=REPORT_PANEL,
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
        panel=REPORT_PANEL,
        complete=_reports,
    )
    prices: str = option(
        parse=choice(PRICE_MODES),
        default="auto",
        metavar="MODE",
        help="Where prices come from (auto|live|cache|bundled): the clouds' own price "
        "lists, fetched when the dated cache has none younger than 7 days (live), the cache "
        "alone (cache), or the bundled table alone (bundled); auto (default): live with "
        "--provider, else cache. The bundled table prices only what no list did.",
        panel=REPORT_PANEL,
    )
    fail_on: str = option(
        trust=_reported("which verdicts fail the audit"),
        parse=choice(FAIL_ON),
        default="orphan",
        metavar="VERDICT",
        help="orphan|suspect|unverified|new: exit 1 on orphans and leaked resources (orphan, "
        "the default), also on suspects (suspect), or only on orphans and leaked resources "
        "new since the last audit (new; needs the history). Unverified resources (no "
        "evidence could judge them) fail the audit too unless --allow-unverified; --fail-on "
        "unverified says so. Acknowledged findings never fail the audit.",
        panel=REPORT_PANEL,
    )
    allow_unverified: bool = option(
        # Ignored while untrusted: without it the audit is only stricter.
        trust=NeedsTrust("lets the audit pass with resources no evidence judged", ignored=True),
        parse=boolean,
        default=False,
        flags=("--allow-unverified",),
        help="Accept fleet resources no evidence source could judge (unverified): they no "
        "longer fail the audit. Without it, an audit that lost its evidence exits 1, not 0.",
        cli_type=bool,
        panel=REPORT_PANEL,
        show_default=False,
    )
    # -- what the audit remembers and tells (docs/history.md) --
    history: bool = option(
        parse=boolean,
        default=True,
        flags=("--history/--no-history",),
        help="Record this audit in the history store ([history]) and say what changed since "
        "the last audit of the same scope (default: on).",
        apply=Shown("Record what this apply did in the history store (default: on).", None),
        cli_type=bool,
        panel=HISTORY_PANEL,
        show_default=False,
    )
    acks: tuple[str, ...] = option(
        parse=string,
        default=(),
        flags=("--acks",),
        metavar="FILE",
        help="A reviewed file of acknowledgements ([[ack]] id, owner, reason, until; "
        "repeatable); those made with `cloudguard ack` are in the history store.",
        many=True,
        path=True,
        trust=NeedsTrust("acknowledges findings: they fail nothing until their date"),
        panel=HISTORY_PANEL,
    )
    notify: bool = option(
        parse=boolean,
        default=True,
        flags=("--notify/--no-notify",),
        help="Send the [notify] webhooks what is new and which acknowledgements expired "
        "(default: on, when [notify] names webhooks).",
        cli_type=bool,
        panel=HISTORY_PANEL,
        show_default=False,
    )
    # -- [history]: where the history lives. cloudguard.toml only: a URL may carry a
    # password, and a command line is visible to every user of the machine. --
    url: str | None = option(
        parse=postgresql_url,
        default=None,
        audit=False,
        trust=NeedsTrust("sends every finding to this database"),
        section="history",
        on_command_line=False,
    )
    url_env: str | None = option(
        parse=variable_name,
        default=None,
        audit=False,
        trust=NeedsTrust("sends every finding to the database this variable names"),
        section="history",
        on_command_line=False,
    )
    path: str | None = option(
        parse=string,
        default=None,
        audit=False,
        trust=NeedsTrust("chooses which history the audit is compared with and writes to"),
        path=True,
        section="history",
        on_command_line=False,
    )
    scope: str | None = option(
        trust=_reported("chooses which history 'new' is judged against"),
        parse=non_empty,
        default=None,
        audit=False,
        section="history",
        on_command_line=False,
    )
    busy_timeout: timedelta = option(  # noqa: RUF009 (option() is a field specifier)
        parse=parse_positive_duration,
        default=timedelta(seconds=DEFAULT_BUSY_TIMEOUT),
        audit=False,
        section="history",
        on_command_line=False,
    )
    # -- [notify]: the webhooks told about new findings and expired acknowledgements --
    webhook: tuple[Webhook, ...] = option(
        parse=webhook,
        default=(),
        audit=False,
        trust=NeedsTrust("sends what is new to these addresses", ignored=True),
        many=True,
        list_only=True,
        section="notify",
        on_command_line=False,
    )
    fatal: bool = option(
        parse=boolean,
        default=False,
        audit=False,
        section="notify",
        on_command_line=False,
    )
    # -- [reap]: what only `reap apply` reads --
    max_age: timedelta = option(  # noqa: RUF009 (option() is a field specifier)
        # Ignored while untrusted: the default (24h) is the stricter.
        trust=NeedsTrust("accepts older plans", ignored=True),
        parse=parse_duration,
        default=_MAX_AGE,
        audit=False,
        apply=Shown(
            "Refuse a plan whose audit is older than this (default: 24h, or [reap] max-age).",
            "DURATION",
        ),
        section="reap",
    )
    item_budget: timedelta = option(  # noqa: RUF009 (option() is a field specifier)
        parse=parse_positive_duration,
        default=_ITEM_BUDGET,
        audit=False,
        apply=Shown(
            "Time one item may take: its reads, every attempt and wait, and the wait for "
            "its action to finish; past it the item is unreadable (or, its action sent, "
            "failed: outcome unknown), named, the next item goes on, and the run exits 75 "
            "(default: 5m, or [reap] item-budget).",
            "DURATION",
        ),
        section="reap",
        panel=LIVE_PANEL,
    )
    deadline: timedelta | None = option(  # noqa: RUF009 (option() is a field specifier)
        parse=parse_positive_duration,
        default=None,
        audit=False,
        apply=Shown(
            "Time the whole apply may take: past it no item is begun, the rest are "
            "not-reached and the run exits 75 (default: the plan's items x --item-budget, "
            "or [reap] deadline).",
            "DURATION",
        ),
        section="reap",
        panel=LIVE_PANEL,
    )
    # Where `reap apply --yes` takes its locks (default: the account's own, from the password
    # database): every apply that may act on the same resources must name the same one.
    lock_directory: str | None = option(
        parse=string,
        default=None,
        audit=False,
        trust=NeedsTrust("chooses which locks reaping honours"),
        path=True,
        section="reap",
        on_command_line=False,
    )
    # Subscriptions / AWS accounts reaping may act in; required for `reap apply --yes`.
    accounts: tuple[str, ...] | None = option(
        trust=NeedsTrust("chooses the subscriptions and accounts reaping may act in"),
        parse=string,
        default=None,
        audit=False,
        many=True,
        list_only=True,
        section="reap",
        on_command_line=False,
    )
    # Not options: the values of the options declared by evidence sources and clouds, by
    # name (defaults filled in); the names given on the command line; the cloudguard.toml
    # read and the keys of it that applied though it is not trusted (`audit.grace`: every
    # report head and plan names them); the command resolved for; and the clouds whose
    # options were read (the registry it works with).
    extra: Mapping[str, Any] = field(default_factory=dict)
    given: frozenset[str] = field(default=frozenset())
    config_file: Path | None = None  # the cloudguard.toml read (None: none found)
    untrusted_keys: tuple[str, ...] = ()
    command: str = ""
    clouds: Clouds | None = field(default=None, compare=False, repr=False)


OPTIONS: tuple[Option, ...] = declarations(Settings)


class OptionClash(ValueError):
    """Two owners declared options of one name: an installation to fix, not a guess to make."""


def every_option(clouds: Clouds | None = None) -> tuple[tuple[Option, str], ...]:
    """Every option with its owner ("core", "evidence", or a cloud's name), in --help order:
    the core's, the evidence sources' before the report's (as they always were shown), then
    each cloud's own (they join the live panel's end; default: the installed clouds')."""
    at = next(i for i, o in enumerate(OPTIONS) if o.panel == REPORT_PANEL)
    owned = [
        *((o, "core") for o in OPTIONS[:at]),
        *((o, "evidence") for o in evidence_options()),
        *((o, "core") for o in OPTIONS[at:]),
    ]
    clouds = clouds or installed_clouds()
    owned += [(o, cloud.name) for cloud in clouds.available() for o in cloud.options]
    seen: dict[str, str] = {}
    for declared, owner in owned:
        for name in (declared.name, *_flags(declared)):
            if name in seen:
                raise OptionClash(
                    f"option {name} is declared twice: by {seen[name]} and by {owner}"
                )
            seen[name] = owner
    return tuple(owned)


def _flags(declared: Option) -> list[str]:
    return [flag for spelled in declared.flags for flag in spelled.split("/")]


def command_options(command: str, clouds: Clouds | None = None) -> tuple[Option, ...]:
    """The options `command` takes on its command line, in --help order (default: with the
    installed clouds' own)."""
    return tuple(o for o, _ in every_option(clouds) if command in o.shown and o.on_command_line)


def config_keys(section: str, clouds: Clouds | None = None) -> tuple[str, ...]:
    """The keys of one cloudguard.toml table, in declaration order."""
    return tuple(o.key for o, _ in every_option(clouds) if o.section == section)
