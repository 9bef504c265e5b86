"""The command-line side of settings: typer parameters from declarations, and `with_settings`.

`with_settings(command)` gives a command function the typer parameters of
the core's options (`Settings`) and calls it with the resolved `Settings`.
Options declared elsewhere (each evidence source's, each installed cloud's)
are added by the command's class (`command_class`) only when that command is
parsed or asked for --help: registering `audit` and `reap` loads no adapter,
so `cloudguard run` never pays for one.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperCommand

from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.cloud import UnknownCredentialError
from cloudguard.cloud.options import Option, OptionValueError
from cloudguard.settings.core_options import OPTIONS, REPORT_PANEL, Settings, every_option
from cloudguard.settings.option_spec import typer_option, typer_parameter
from cloudguard.settings.resolve import resolve

ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="Config file whose [audit] table supplies these options "
        "(default: the nearest cloudguard.toml up to the repository root, then $HOME; "
        "only your own file, not writable by others).",
    ),
]

_BY_NAME = {declared.name: declared for declared in OPTIONS}

# What the command's class parsed of the options it added, and the clouds it read them
# from, for `with_settings` to resolve along with the core's.
_parsed_elsewhere: ContextVar[tuple[Clouds, dict[str, Any]] | None] = ContextVar(
    "cloudguard_options_declared_elsewhere", default=None
)


def core_options(command: str) -> tuple[Option, ...]:
    """The core's options `command` takes on its command line, in --help order."""
    return tuple(o for o in OPTIONS if command in o.shown and o.on_command_line)


def placed_by_hand(name: str, command: str) -> Any:
    """The `typer.Option` of one option, for a command that places it itself in --help:
    `max_age: Annotated[str | None, placed_by_hand("max_age", REAP_APPLY)] = None`."""
    return typer_option(_BY_NAME[name], command)


Function = TypeVar("Function", bound=Callable[..., Any])


def with_settings(command: str) -> Callable[[Function], Function]:
    """Give `function` the typer parameters of `command`'s options and call it with `settings`.

    Its own parameters stay where they are; the derived ones (and --config)
    take the place of its `settings` parameter. An option it declares itself
    (to place it in --help) is resolved like the others. Register it with
    `cls=command_class(command)`, so the options declared elsewhere are taken too.
    """

    def decorate(function: Function) -> Function:
        signature = inspect.signature(function, eval_str=True)
        own = list(signature.parameters.values())
        at = [p.name for p in own].index("settings")
        derived = [
            typer_parameter(o, command)
            for o in core_options(command)
            if o.name not in signature.parameters
        ]
        config = inspect.Parameter(
            "config", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ConfigFile
        )
        names = {o.name for o in core_options(command)}

        @functools.wraps(function)
        def run(**arguments: Any) -> Any:
            config_path = arguments.pop("config")
            given = {name: arguments.pop(name) for name in names if name in arguments}
            parsed = _parsed_elsewhere.get()
            clouds, elsewhere = parsed if parsed is not None else (Clouds.installed(), {})
            settings = resolve(command, {**given, **elsewhere}, config_path, clouds)
            return function(settings=settings, **arguments)

        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*own[:at], *derived, config, *own[at + 1 :]]
        )
        return run  # type: ignore[return-value]

    return decorate


@cache
def command_class(command: str) -> type[TyperCommand]:
    """The click command class of `command`: it adds the options the evidence sources and
    the installed clouds declare, before the report's options (or --config)."""

    class WithOptionsDeclaredElsewhere(TyperCommand):
        _added: list[Any] | None = None
        _clouds: Clouds | None = None

        def get_params(self, ctx: Any) -> list[Any]:
            params = super().get_params(ctx)
            if self._added is None:
                self._clouds = Clouds.installed()
                self._added = _click_parameters(command, self._clouds)
            report = {o.name for o in OPTIONS if o.panel == REPORT_PANEL} | {"config"}
            at = next((i for i, p in enumerate(params) if p.name in report), len(params))
            return [*params[:at], *self._added, *params[at:]]

        def invoke(self, ctx: Any) -> Any:
            added = {p.name for p in self._added or ()}
            values = {name: ctx.params.pop(name) for name in list(ctx.params) if name in added}
            assert self._clouds is not None  # parsing called get_params
            token = _parsed_elsewhere.set((self._clouds, values))
            try:
                return super().invoke(ctx)
            finally:
                _parsed_elsewhere.reset(token)

    WithOptionsDeclaredElsewhere.__name__ = f"{command.title().replace(' ', '')}Command"
    return WithOptionsDeclaredElsewhere


def _click_parameters(command: str, clouds: Clouds) -> list[Any]:
    """The click parameters of `command`'s options not declared by the core, made by typer
    itself from the same declarations (a one-command app is a command)."""
    declared = [
        typer_parameter(o, command)
        for o, owner in every_option(clouds)
        if owner != "core" and command in o.shown and o.on_command_line
    ]
    if not declared:
        return []

    def holder(**values: Any) -> None:
        pass

    holder.__signature__ = inspect.Signature(declared)  # type: ignore[attr-defined]
    app = typer.Typer(add_completion=False)
    app.command()(holder)
    return list(typer.main.get_command(app).params)


def check_cloud_options(settings: Settings, clouds: Clouds) -> None:
    """Each installed cloud checks its own options' values (given or not, swept or not, as
    any option is checked): values that do not go together are a usage error (2)."""
    for cloud in clouds.available():
        try:
            cloud.check_options({o.name: o.value_in(settings.extra) for o in cloud.options})
        except OptionValueError as exc:
            raise typer.BadParameter(str(exc), param_hint=exc.flag) from exc


def check_credential(settings: Settings, clouds: Clouds, providers: list[str]) -> None:
    """An unknown --credential is a usage error (2) before anything is read or done."""
    try:
        for name in providers:
            clouds.cloud(name).check_credential(settings.credential)
    except UnknownCredentialError as exc:
        raise typer.BadParameter(str(exc), param_hint="--credential") from exc
