"""`cloudguard demo [--serve]`: run the demo an adapter ships (the `cloudguard.demos` group).

The core names no adapter: the demo is found by entry point, and its absence
is "did not run" (75) with the one install line that brings it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from cloudguard import exit_codes

HELP = "Run the embedded demo: a fake Azure fleet audited over HTTPS, then a sealed run."


def demo(
    serve: Annotated[
        bool,
        typer.Option(
            "--serve",
            help="Leave the fake fleet running on 127.0.0.1 until Ctrl-C, and print the exact "
            "audit and reap commands to try against it.",
        ),
    ] = False,
) -> None:
    from importlib.metadata import entry_points

    # An adapter ships its demo under the `cloudguard.demos` entry-point group: the core
    # names no adapter. The first by name runs (only the Azure adapter ships one today).
    demos = sorted(entry_points(group="cloudguard.demos"), key=lambda ep: ep.name)
    try:
        demo_main = demos[0].load()
    except (IndexError, ImportError):
        typer.echo(
            "cloudguard: the demo needs the Azure adapter: pip install 'cloudguard-ci[azure]' "
            "'cloudguard-azure[fake]' (its fake ARM; from a checkout: pip install ./ "
            "'./adapters/azure[fake]')",
            err=True,
        )
        raise typer.Exit(exit_codes.DID_NOT_RUN) from None
    raise typer.Exit(demo_main(serve=True) if serve else demo_main())


def register(app: typer.Typer) -> None:
    """`demo` on the cloudguard command, where `--help` lists it (after the guard's)."""
    app.command(help=HELP)(demo)
