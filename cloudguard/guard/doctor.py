"""`cloudguard doctor`: assert, as live facts about this process, that the seal holds.

Each check reads the current environment and filesystem; nothing is
probed by calling the thing it guards.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from cloudguard.documents import reach_log
from cloudguard.guard import reach
from cloudguard.guard.seal import (
    PROVIDER_SHIM,
    SEAL_DIR_VARIABLE,
    SITECUSTOMIZE_DIR,
    Seal,
    policy,
)
from cloudguard.guard.seal_registry import Registry

MARKERS = ("# cloudguard refusing shim", "# cloudguard refusing provider")


def problems(environ: Mapping[str, str], registry: Registry) -> Iterator[str]:
    """Every way in which the seal does not hold, each a named reason."""
    log = environ.get(reach.LOG_VARIABLE)
    if not log:
        yield (
            f"{reach.LOG_VARIABLE} is not set: no reach log is armed. doctor checks a sealed "
            "process: run it under the seal, `cloudguard run -- cloudguard doctor`"
        )
    else:
        try:
            reach_log.read(log)
        except reach_log.ReachLogError as error:
            yield str(error)
    root = environ.get(SEAL_DIR_VARIABLE)
    if not root or not Path(root, "bin").is_dir():
        yield f"{SEAL_DIR_VARIABLE} does not name a live seal directory ({root or 'unset'})"
        return
    seal = Seal(Path(root))
    for name in policy(registry, seal).identity_vars(environ):
        yield f"identity variable {name} is set (the seal drops it)"
    for name, value in seal.redirections().items():
        if environ.get(name) != value:
            yield f"{name} is not redirected by the seal (expected {value!r})"
    for variable in registry.provider_variables:
        bound = environ.get(variable, "")
        words = bound.split()
        if not words or Path(words[0]).name != PROVIDER_SHIM or not _is_refuser(words[0]):
            yield f"{variable} is not bound to the refusing provider ({bound or 'unset'})"
    python_path = environ.get("PYTHONPATH", "").split(os.pathsep)
    if python_path[0] != str(SITECUSTOMIZE_DIR):
        yield (
            f"PYTHONPATH does not start with the in-process guards ({SITECUSTOMIZE_DIR}): "
            "Python children would run unguarded"
        )
    search_path = environ.get("PATH", "")
    for tool in registry.shims:
        found = shutil.which(tool, path=search_path)
        if found is None or Path(found).parent != seal.bin_dir or not _is_refuser(found):
            yield f"`{tool}` resolves to {found or 'nothing'}, not the guard in {seal.bin_dir}"


def _is_refuser(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return os.access(path, os.X_OK) and any(marker in head for marker in MARKERS)


# -- outside a sealed run: would pytest seal this project's tests? -------------------------

DISTRIBUTION = "cloudguard-ci"  # the name pytest lists on its plugins line and required_plugins
_TRUE = ("y", "yes", "t", "true", "on", "1")  # pytest's own reading of a bool ini value


def project_facts(python: str | None, directory: str) -> dict[str, object]:
    """The facts of `cloudguard.guard.pytest_facts`, gathered in `python` (None: this one)."""
    from cloudguard.guard import pytest_facts

    if python is None:
        return pytest_facts.gather(directory)
    import json
    import subprocess

    done = subprocess.run(
        [python, "-I", pytest_facts.__file__],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise OSError(
            f"{python} could not tell how pytest would start (exit {done.returncode}: {last})"
        )
    facts: dict[str, object] = json.loads(done.stdout)
    return facts


def project_verdict(
    facts: Mapping[str, object], environ: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """What holds, and what does not, for the plugin to seal every session: (said, problems)."""
    python, pytest_version = facts.get("python"), facts.get("pytest")
    if not pytest_version:
        return [], [f"pytest is not installed for {python}: the plugin cannot load there"]
    said, problems = [], []
    plugin = facts.get("plugin")
    if isinstance(plugin, dict):
        installed = f"{plugin.get('distribution')} {plugin.get('version')}"
        said.append(
            f"the plugin is installed for {python} (pytest {pytest_version}): entry point "
            f"cloudguard -> {plugin.get('module')} ({installed})"
        )
    else:
        problems.append(
            f"the plugin is not installed for {python} (pytest {pytest_version}): no pytest11 "
            f"entry point cloudguard; install {DISTRIBUTION} in the environment the tests run in"
        )
    if facts.get("error"):
        return said, [*problems, f"pytest cannot read its configuration here: {facts['error']}"]
    config = facts.get("config")
    if not config:
        problems.append(
            "no pytest configuration file from here up: add cloudguard = true and "
            f'required_plugins = ["{DISTRIBUTION}"] to [tool.pytest.ini_options] in pyproject.toml'
        )
        return said, problems
    found = facts.get("ignored")
    ignored = ", ".join(str(name) for name in found) if isinstance(found, list) else ""
    said.append(
        f"pytest reads {config}" + (f" (it ignores {ignored} beside it)" if ignored else "")
    )
    values = facts.get("values")
    return _ini_verdict(
        facts, str(config), values if isinstance(values, dict) else {}, environ, said, problems
    )


def _ini_verdict(
    facts: Mapping[str, object],
    config: str,
    values: Mapping[str, object],
    environ: Mapping[str, str],
    said: list[str],
    problems: list[str],
) -> tuple[list[str], list[str]]:
    """The chosen file's `cloudguard`, `addopts` and `required_plugins`, and what pytest is
    handed besides (PYTEST_ADDOPTS): read by pytest's own parser where it could be asked."""
    import shlex

    from_environment = shlex.split(environ.get("PYTEST_ADDOPTS", ""))
    options = _words(values.get("addopts")) + from_environment
    handed = _as_pytest_reads(facts, config)
    if handed is None:  # an older pytest that could not be asked: read PYTEST_ADDOPTS here
        disabled = _disables(options)
        if disabled:
            where = "PYTEST_ADDOPTS" if _disables(from_environment) else f"addopts in {config}"
            problems.append(f"{where} turns the plugin off ({disabled})")
        override = None
    else:
        disabled_by, override = handed
        if disabled_by:
            problems.append(f"{disabled_by} turns the plugin off (-p no:cloudguard)")
    autoload_off = environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD") or facts.get("autoload_off")
    if autoload_off and not _names_the_plugin(options):
        problems.append(
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD is set and addopts has no "
            "-p cloudguard.guard.pytest.plugin: the plugin is never loaded"
        )
    required = [_requirement_name(word) for word in _words(values.get("required_plugins"))]
    in_file = str(values.get("cloudguard", "")).strip().lower() in _TRUE
    if override is not None and override[0].strip().lower() not in _TRUE:
        value, place = override
        stops = in_file or DISTRIBUTION in required
        problems.append(
            f"{place} sets -o cloudguard={value}: the plugin is off"
            + (
                f", and pytest stops every session (usage error, 4): {config} requires it"
                if stops
                else ": pytest runs these tests unguarded"
            )
        )
    elif override is None and not in_file and "--cloudguard" not in options:
        problems.append(
            f"{config} does not enable the plugin (cloudguard = true): pytest runs these tests "
            "unguarded unless --cloudguard is given or `cloudguard run -- pytest` runs them"
        )
    if DISTRIBUTION in required:
        said.append(f"required_plugins names {DISTRIBUTION}: without the plugin pytest stops")
    else:
        problems.append(
            f"required_plugins does not name {DISTRIBUTION} "
            f'(required_plugins = ["{DISTRIBUTION}"]): where it is not installed, pytest only '
            "warns about an unknown `cloudguard` option and runs every test unguarded"
        )
    return said, problems


def _as_pytest_reads(
    facts: Mapping[str, object], config: str
) -> tuple[str, tuple[str, str] | None] | None:
    """From the facts pytest's own parser gave (None: it could not be asked): where a
    `-p no:cloudguard` comes from ("" when none), and the `-o cloudguard=` that holds
    with where it comes from."""
    if not facts.get("asked"):
        return None
    place = {"PYTEST_ADDOPTS": "PYTEST_ADDOPTS", "addopts": f"addopts in {config}"}
    plugins = facts.get("plugins")
    disabled_by = ""
    for entry in plugins if isinstance(plugins, list) else []:
        if isinstance(entry, dict) and str(entry.get("spec", "")).strip() == "no:cloudguard":
            disabled_by = place.get(str(entry.get("from")), str(entry.get("from")))
    overrides = facts.get("overrides")
    given = overrides.get("cloudguard") if isinstance(overrides, dict) else None
    if not isinstance(given, dict):
        return disabled_by, None
    origin = str(given.get("from"))
    return disabled_by, (str(given.get("value", "")), place.get(origin, origin))


def _words(value: object) -> list[str]:
    """An ini value as pytest splits it: a TOML list, or whitespace-separated words."""
    import shlex

    if isinstance(value, list):
        return [str(word) for word in value]
    return shlex.split(str(value)) if value else []


def _disables(options: list[str]) -> str:
    """`-p no:cloudguard` (or `-pno:cloudguard`) among pytest's options, as written."""
    for at, word in enumerate(options):
        if word in ("-pno:cloudguard", "-p=no:cloudguard"):
            return word
        if word == "-p" and options[at + 1 : at + 2] == ["no:cloudguard"]:
            return "-p no:cloudguard"
    return ""


def _names_the_plugin(options: list[str]) -> bool:
    modules = {"cloudguard", "cloudguard.guard.pytest.plugin", "cloudguard.pytest_plugin"}
    pairs = zip(options, [*options[1:], ""], strict=False)
    return any(
        (word == "-p" and following in modules) or (word.startswith("-p") and word[2:] in modules)
        for word, following in pairs
    )


def _requirement_name(word: str) -> str:
    """`cloudguard-ci>=0.1` -> `cloudguard-ci`: the name pytest compares, as it is written."""
    for at, character in enumerate(word):
        if character in "<>=!~;[ ":
            return word[:at]
    return word
