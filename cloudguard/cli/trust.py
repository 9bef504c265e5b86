"""`cloudguard trust [FILE]`, `--list`, `--revoke`: the operator's consent to a discovered file.

A cloudguard.toml that cloudguard finds on its own (from the working
directory up to the repository root, then `$HOME`) may set the keys that run
a program, open the seal or widen what is trusted only once the operator
trusted its exact bytes (cloudguard.trust_store). `trust` reads the file as every
command does (the same checks: the user's own file, in a directory nobody
else can swap it in), records its path and SHA-256, and names the keys it
lets take effect, for the operator to know what they agreed to. `--sha256`
pins the digest a workflow reviewed: anything else is refused.

Exit codes: 0 done; 2 usage (no cloudguard.toml here, a file of another
name); 97 the file cannot be trusted (another user's, a link, in a
directory others can write, not the pinned digest) or the store cannot be.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from cloudguard import exit_codes, project_file
from cloudguard import trust_store as store


def register(app: typer.Typer) -> None:
    app.command(
        help="Trust a discovered cloudguard.toml: the keys that run programs, send "
        "credentials or open the seal take effect from it until it is edited. Exit: 0 done; "
        "2 usage; 97 the file or the trust store cannot be trusted."
    )(trust)


def trust(
    file: Annotated[
        Path | None,
        typer.Argument(
            metavar="[FILE]",
            help="The cloudguard.toml (default: the nearest one, as the commands find it).",
            show_default=False,
        ),
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", help="List the trusted files and whether each still is.")
    ] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Forget FILE.")] = False,
    sha256: Annotated[
        str | None,
        typer.Option(
            "--sha256",
            metavar="HEX",
            help="Trust FILE only if its content has this digest (a workflow pins the "
            "file it reviewed).",
        ),
    ] = None,
) -> None:
    try:
        if list_:
            _list()
        elif revoke:
            path = _the_file(file)
            forgotten = store.revoke(path)
            typer.echo(f"cloudguard: {'revoked' if forgotten else 'was not trusted'}: {path}")
        else:
            _trust(_the_file(file), sha256)
    except (store.TrustStoreError, project_file.ProjectFileError) as error:
        typer.echo(f"cloudguard trust: refused: {error}", err=True)
        raise typer.Exit(exit_codes.REFUSED_ADMISSION) from None


def _the_file(file: Path | None) -> Path:
    if file is None:
        try:
            found = project_file.find_project_file(Path.cwd())
        except project_file.UntrustedFileError as error:
            raise project_file.ProjectFileError(error.path, error.reason) from None
        if found is None:
            raise typer.BadParameter(
                f"{project_file.not_found_message(Path.cwd())}: name the file", param_hint="FILE"
            )
        return found
    if file.is_dir():
        raise typer.BadParameter(
            f"{file} is a directory, not a file: name the {project_file.PROJECT_FILE} in it",
            param_hint="FILE",
        )
    if file.name != project_file.PROJECT_FILE:
        raise typer.BadParameter(
            f"only a discovered {project_file.PROJECT_FILE} needs trust: a file named with "
            "--config or --registry is trusted as it is",
            param_hint="FILE",
        )
    return Path(os.path.abspath(file))


def _trust(path: Path, pinned: str | None) -> None:
    document = project_file.read_project_file(path, discovered=True)
    if pinned is not None and pinned.strip().lower() != document.sha256:
        raise project_file.ProjectFileError(
            path, f"its sha256 is {document.sha256}, not the pinned {pinned}: not trusted"
        )
    entry = store.trust(path, document.sha256)
    typer.echo(f"cloudguard: trusted {entry.path} (sha256 {entry.sha256})")
    for key, need in keys_needing_trust(document).items():
        typer.echo(f"  it may now set {key}: {need.why}")


def keys_needing_trust(document: project_file.ProjectDocument) -> dict[str, store.NeedsTrust]:
    """The keys of `document` that take effect only from a trusted file, with what each does."""
    from cloudguard.guard.seal_registry import NEEDS_TRUST
    from cloudguard.settings.core_options import every_option
    from cloudguard.settings.resolve import needs_trust

    declared = {f"{o.section}.{o.key}": need for o, _ in every_option() if (need := needs_trust(o))}
    declared.update(NEEDS_TRUST)
    present = {
        f"{section}.{key}" for section in project_file.SECTIONS for key in document.section(section)
    }
    present.update(section for section in project_file.SECTIONS if document.section(section))
    return {key: need for key, need in declared.items() if key in present}


def _list() -> None:
    entries = store.read_store()
    if not entries:
        typer.echo(f"cloudguard: no trusted files ({store.store_path()})")
    for entry in entries.values():
        typer.echo(f"{_state(entry)}\t{entry.sha256[:16]}\t{entry.at}\t{entry.path}")


def _state(entry: store.Trusted) -> str:
    """trusted, changed (edited since: untrusted), missing, or refused (not readable as ours)."""
    if not os.path.lexists(entry.path):
        return "missing"
    try:
        document = project_file.read_project_file(Path(entry.path), discovered=True)
    except project_file.ProjectFileError:
        return "refused"
    return "trusted" if document.sha256 == entry.sha256 else "changed"
