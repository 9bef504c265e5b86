"""`cloudguard init`: a commented cloudguard.toml from a few answers, and pytest's two lines.

A team whose fleet looks different from the one cloudguard was first built
for (other tag names, Terraform state instead of a controller home, a CI
runner's run id, provider variables of its own) starts here. Each answer
becomes a key of cloudguard.toml with a comment saying what it does: asked on
a terminal, taken from the options otherwise (`--no-input`, or stdin not a
terminal). The file is read back as every command reads it before it is
written (an answer it would refuse is a usage error, 2), never replaces an
existing one without `--force`, and is never written through a link.

The pytest plugin is turned on with `required_plugins`, so that a suite whose
environment lacks cloudguard-ci refuses to start instead of running unguarded
(pytest only warns of an unknown `cloudguard` option): appended to
pyproject.toml as a `[tool.pytest.ini_options]` table when it has none and no
other pytest configuration file is in the way; printed, to add by hand,
otherwise (cloudguard edits no table it did not write).

Exit codes: 0 written; 2 usage (a file already there, an answer the file
would refuse, no answer at a prompt); 75 a file could not be written.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from cloudguard import exit_codes, project_file
from cloudguard.cloud.adapter_registry import installed_adapters

PYTEST_LINES = 'cloudguard = true\nrequired_plugins = ["cloudguard-ci"]\n'
# The distribution name pytest matches `required_plugins` against: its metadata's Name,
# exactly (pluggy's DistFacade.project_name), so "cloudguard_ci" would not match.
_PYTEST_TABLE = (
    "\n[tool.pytest.ini_options]\n"
    "# cloudguard's plugin seals every test (docs/pytest.md); required_plugins makes pytest\n"
    "# refuse to start where cloudguard-ci is not installed, rather than run unguarded.\n"
    + PYTEST_LINES
)

EVIDENCE_CHOICES = {
    "1": ("controller-home", "a controller home directory (state/<task>.meta, queue/, workers/)"),
    "2": ("controller-records", 'an export of the controller\'s records ({"tasks": [...]})'),
    "3": ("terraform-state", "Terraform state (a .tfstate, or `terraform show -json` output)"),
    "4": ("owned-ids", "a file of the cloud ids your fleet owns, one a line"),
    "5": ("owned-ids-command", "a command that prints the cloud ids your fleet owns"),
    "6": ("", "nothing yet"),
}


@dataclass
class Answers:
    task_tag: str = "task-id"
    generation_tag: str | None = "repository-generation"
    evidence: dict[str, list[str] | str] = field(default_factory=dict)
    repo: str | None = None
    fixtures_from: list[str] = field(default_factory=list)
    provider_variables: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)


def register(app: typer.Typer) -> None:
    app.command(
        help="Write a commented cloudguard.toml from a few answers (asked on a terminal, or "
        "given as options), and turn the pytest plugin on with required_plugins. "
        "Exit: 0 written; 2 usage (the file exists: --force); 75 not written."
    )(init)


def init(
    task_tag: Annotated[
        str | None, typer.Option(metavar="KEY", help="Tag marking a resource as the fleet's.")
    ] = None,
    generation_tag: Annotated[
        str | None,
        typer.Option(metavar="KEY", help="Tag naming the commit a resource was made from."),
    ] = None,
    controller_home: Annotated[
        str | None, typer.Option(metavar="DIR", help="Evidence: a controller home.")
    ] = None,
    controller_records: Annotated[
        str | None, typer.Option(metavar="FILE", help="Evidence: a controller records export.")
    ] = None,
    terraform_state: Annotated[
        list[str] | None,
        typer.Option(metavar="FILE", help="Evidence: Terraform state (repeatable)."),
    ] = None,
    owned_ids: Annotated[
        list[str] | None,
        typer.Option(metavar="FILE", help="Evidence: a file of owned cloud ids (repeatable)."),
    ] = None,
    owned_ids_command: Annotated[
        str | None,
        typer.Option(metavar="COMMAND", help="Evidence: a command printing owned cloud ids."),
    ] = None,
    repo: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="Git repository whose commits generations name."),
    ] = None,
    fixtures_from: Annotated[
        list[str] | None,
        typer.Option(metavar="PATH", help="Test corpus of fixture task ids (repeatable)."),
    ] = None,
    provider_variable: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="A variable your code reads to find its cloud provider command: the seal "
            "binds it to a refusing provider (repeatable).",
        ),
    ] = None,
    provider: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="A cloud the audit sweeps live (repeatable).",
            autocompletion=lambda incomplete: [
                name for name in sorted(installed_adapters()) if name.startswith(incomplete)
            ],
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write it.")
    ] = Path(project_file.PROJECT_FILE),
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    no_input: Annotated[
        bool, typer.Option("--no-input", help="Ask nothing: the options and defaults only.")
    ] = False,
    pytest: Annotated[
        bool,
        typer.Option(
            "--pytest/--no-pytest",
            help="Turn the pytest plugin on in pyproject.toml (cloudguard = true, "
            "required_plugins).",
        ),
    ] = True,
) -> None:
    if output.exists() and not force:
        raise typer.BadParameter(
            f"{output} exists: not replaced (review it, or --force to write a new one)",
            param_hint="--output",
        )
    answers = Answers(
        task_tag=task_tag if task_tag is not None else "task-id",  # "" is refused, not defaulted
        generation_tag=generation_tag if generation_tag is not None else "repository-generation",
        repo=repo,
        fixtures_from=list(fixtures_from or ()),
        provider_variables=list(provider_variable or ()),
        providers=list(provider or ()),
    )
    given = {
        "controller-home": controller_home,
        "controller-records": controller_records,
        "terraform-state": list(terraform_state or ()),
        "owned-ids": list(owned_ids or ()),
        "owned-ids-command": owned_ids_command,
    }
    for key, value in [*given.items(), ("fixtures-from", fixtures_from)]:
        if any(not item.strip() for item in ([value] if isinstance(value, str) else value or ())):
            raise typer.BadParameter("an empty path", param_hint=f"--{key}")
    answers.evidence = {key: value for key, value in given.items() if value}
    if not no_input and sys.stdin.isatty():
        _ask(answers, asked_tags=task_tag is None, asked_repo=repo is None)
    text = render(answers)
    _write(output, text, force)
    typer.echo(f"cloudguard init: wrote {output}")
    needing, named = _needs_trust(text)
    said = []
    if needing:
        said.append(f"{', '.join(needing)}, which a discovered file sets only once trusted")
    if named:
        said.append(
            f"{', '.join(named)}, which every report names as an untrusted file's until it is "
            "trusted"
        )
    if said:
        typer.echo(
            f"cloudguard init: it sets {'; and '.join(said)}: review it, then "
            f"`cloudguard trust {output}`"
        )
    if pytest:
        _pytest_lines(output.resolve().parent)


def _ask(answers: Answers, *, asked_tags: bool, asked_repo: bool) -> None:
    """The few questions, on a terminal; an answer left empty keeps what the options said."""
    try:
        if asked_tags:
            answers.task_tag = typer.prompt(
                "Tag that marks a resource as your fleet's (its task or run id)",
                default=answers.task_tag,
            )
            generation = typer.prompt(
                "Tag naming the commit a resource was made from ('-': none)",
                default=answers.generation_tag or "-",
            )
            answers.generation_tag = None if generation.strip() == "-" else generation
        if not answers.evidence:
            menu = "\n".join(f"  {n} {what}" for n, (_, what) in EVIDENCE_CHOICES.items())
            picked = ""
            while picked not in EVIDENCE_CHOICES:
                picked = typer.prompt(
                    f"What knows which resources your fleet owns?\n{menu}\n", default="6"
                ).strip()
            key = EVIDENCE_CHOICES[picked][0]
            if key:
                where = typer.prompt(f"  {key}")
                many = key in ("terraform-state", "owned-ids")
                answers.evidence[key] = [where] if many else where
        if asked_repo and answers.generation_tag:
            repo = typer.prompt(
                "Git repository whose commits the generation tags name ('-': skip)", default="."
            )
            answers.repo = None if repo.strip() == "-" else repo
        if not answers.provider_variables:
            names = typer.prompt(
                "Variables your code reads to find its cloud provider command "
                "(comma-separated, '-': none)",
                default="-",
            )
            answers.provider_variables = [n.strip() for n in names.split(",") if n.strip("- ")]
    except typer.Abort:
        typer.echo("cloudguard init: stopped before every answer; nothing written", err=True)
        raise typer.Exit(exit_codes.USAGE) from None


def render(answers: Answers) -> str:
    """The commented file for `answers`."""
    lines = [
        "# cloudguard.toml: what cloudguard knows of this project's fleet and its tests.",
        "# Written by `cloudguard init`; every key is in cloudguard's docs (reference.md, what",
        "# cloudguard trusts). A key marked (trust) takes effect from this file only once you",
        "# ran `cloudguard trust` on it; an edit untrusts it.",
        "",
        "[audit]",
        "# The tag that makes a resource the fleet's: one without it is only counted.",
        f"task-tag = {_toml(answers.task_tag)}",
    ]
    if answers.generation_tag:
        lines += [
            "# The tag naming the commit a resource was made from (checked against repo).",
            f"generation-tag = {_toml(answers.generation_tag)}",
        ]
    lines += ["", "# Evidence: what explains a fleet resource (docs/audit.md, the evidence model)."]
    if answers.evidence:
        for key, value in answers.evidence.items():
            lines += [_EVIDENCE_COMMENTS[key], f"{key} = {_toml(value)}"]
    else:
        lines += [
            "# None yet: every fleet resource is `unverified`, and fails the audit (exit 1),",
            "# until one of controller-home, controller-records, terraform-state, owned-ids or",
            "# owned-ids-command names it, or you accept unjudged resources by name:",
            "# allow-unverified = true",
        ]
    if answers.repo:
        lines += [
            "# (trust) The git repository whose commits the generation tags name: runs git there.",
            f"repo = {_toml(answers.repo)}",
        ]
    if answers.fixtures_from:
        lines += [
            "# Where your tests live: a task id found there literally is a fixture id.",
            f"fixtures-from = {_toml(answers.fixtures_from)}",
        ]
    if answers.providers:
        lines += [
            "# (trust) The clouds swept live, with your credentials.",
            f"provider = {_toml(answers.providers)}",
        ]
    lines += _HISTORY_COMMENT
    if answers.provider_variables:
        lines += [
            "",
            "[provider]",
            "# Variables your code reads to find its cloud provider command: the seal binds",
            "# each to a refusing provider during tests, so a reach through it is recorded.",
            f"variables = {_toml(answers.provider_variables)}",
        ]
    return "\n".join(lines) + "\n"


# The history is on by default and needs no key; the table is said, commented out, so a
# team that shares one history across machines finds where it goes.
_HISTORY_COMMENT = [
    "",
    "# The audit remembers what it found and says what changed since the last audit",
    "# (docs/history.md): on by default, in a SQLite file in your state directory",
    "# (~/.local/state/cloudguard/history.sqlite3). To keep one history for audits that run",
    "# on many machines, a PostgreSQL database (trust) whose URL a variable holds:",
    "# [history]",
    '# url-env = "CLOUDGUARD_HISTORY_URL"',
]

_EVIDENCE_COMMENTS = {
    "controller-home": "# A controller home: state/<task>.meta, queue/<task>.json, workers/*.json.",
    "controller-records": '# The controller\'s records, exported: {"tasks": [...]}.',
    "terraform-state": "# Terraform state: a resource whose cloud id is in it is owned.",
    "owned-ids": "# Files of the cloud ids your fleet owns, one a line (# comments).",
    "owned-ids-command": (
        "# (trust) A command printing the cloud ids your fleet owns: run, never by a shell."
    ),
}


def _toml(value: str | list[str]) -> str:
    # A JSON string with every non-ASCII character escaped is a TOML basic string.
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(item) for item in value) + "]"
    return json.dumps(value)


def _needs_trust(text: str) -> tuple[list[str], list[str]]:
    """The keys of `text` that a discovered file sets only once trusted, and those that
    apply untrusted but are named in every report (cloudguard.settings.resolve)."""
    data = tomllib.loads(text)
    from cloudguard.settings.core_options import every_option
    from cloudguard.settings.resolve import needs_trust

    needs = {(o.section, o.key): need for o, _ in every_option() if (need := needs_trust(o))}
    present = [(section, key) for section, table in data.items() for key in table]
    shown = [(f"{s}.{k}", needs[s, k]) for s, k in present if (s, k) in needs]
    return (
        [key for key, need in shown if not need.reported],
        [key for key, need in shown if need.reported],
    )


def _write(output: Path, text: str, force: bool) -> None:
    """Checked as every command reads it, then put in place: never through a link, never
    over an existing file without `force`."""
    directory = output.resolve().parent
    try:
        fd, name = tempfile.mkstemp(dir=directory, prefix=".cloudguard-init-")
    except OSError as error:
        typer.echo(f"cloudguard init: cannot write in {directory}: {error.strerror}", err=True)
        raise typer.Exit(exit_codes.DID_NOT_RUN) from None
    temporary = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)  # a project's file: readable, written by its owner only
        _check(temporary)
        if force:
            os.replace(temporary, output)  # replaces a link itself, never writes through it
        else:
            os.link(temporary, output)  # fails if anything, a link included, is there
    except FileExistsError:
        raise typer.BadParameter(f"{output} exists: not replaced", param_hint="--output") from None
    except OSError as error:
        typer.echo(f"cloudguard init: cannot write {output}: {error.strerror}", err=True)
        raise typer.Exit(exit_codes.DID_NOT_RUN) from None
    finally:
        temporary.unlink(missing_ok=True)


def _check(path: Path) -> None:
    """What `cloudguard audit` and the seal would say of the file: an answer either would
    refuse is a usage error here, named."""
    from cloudguard.guard.seal_registry import RegistryError, load_registry
    from cloudguard.settings import config_errors as cfg
    from cloudguard.settings.resolve import section_values

    try:
        document = project_file.read_project_file(path)
        section_values(document, "audit")
        load_registry(path)
    except (cfg.ConfigError, RegistryError, project_file.ProjectFileError) as error:
        shown = str(error).replace(str(path), "cloudguard.toml")
        raise typer.BadParameter(f"the answers make an invalid file: {shown}") from None


def _pytest_lines(project: Path) -> None:
    """`cloudguard = true` and `required_plugins` where pytest reads them, or say where."""
    pyproject = project / "pyproject.toml"
    names = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")
    other = [name for name in names if _pytest_config(project / name)]
    if other or not pyproject.is_file():
        where = other[0] if other else "pyproject.toml ([tool.pytest.ini_options])"
        typer.echo(f"cloudguard init: pytest: add to {where}:\n{PYTEST_LINES.rstrip()}")
        return
    try:
        tables = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        typer.echo(f"cloudguard init: pytest: {pyproject} not read ({error}); add to it:")
        typer.echo(f"[tool.pytest.ini_options]\n{PYTEST_LINES.rstrip()}")
        return
    options = tables.get("tool", {}).get("pytest", {}).get("ini_options")
    if options is None:
        with pyproject.open("a", encoding="utf-8") as handle:
            handle.write(_PYTEST_TABLE)
        typer.echo(f"cloudguard init: pytest: added [tool.pytest.ini_options] to {pyproject}")
        return
    if options.get("cloudguard") is True and "cloudguard-ci" in options.get("required_plugins", []):
        typer.echo(f"cloudguard init: pytest: {pyproject} already turns the plugin on")
        return
    typer.echo(
        f"cloudguard init: pytest: add to [tool.pytest.ini_options] in {pyproject}:\n"
        f"{PYTEST_LINES.rstrip()}"
    )


def _pytest_config(path: Path) -> bool:
    """Whether `path` is a pytest configuration pytest would take before pyproject.toml."""
    if not path.is_file():
        return False
    if path.name in ("pytest.ini", ".pytest.ini"):
        return True
    text = path.read_text(encoding="utf-8", errors="replace")
    return "[pytest]" in text or "[tool:pytest]" in text
