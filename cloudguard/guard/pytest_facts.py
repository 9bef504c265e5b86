"""How pytest would start in one Python, from a directory: the facts `cloudguard doctor` judges.

Gathered where the tests run, not where cloudguard runs: `doctor --python
PATH` runs this file as a script with that interpreter (`python -I FILE`),
so a team whose test environment lacks cloudguard-ci learns it from the
environment that lacks it. Stdlib only, and cloudguard is not imported:
the other interpreter may not have it.

The facts, as JSON: the interpreter; pytest's version (None when pytest is
not installed); the `pytest11` entry point named `cloudguard` and its
distribution (None when the plugin is not installed); the configuration file
pytest itself chose from the directory (found by pytest's own
`locate_config`, so every rule of pytest's version holds: pytest.toml,
pytest.ini, pyproject.toml, tox.ini, setup.cfg, which one wins), the files it
ignored, and the values of `cloudguard`, `addopts` and `required_plugins` in
the chosen one; then what pytest would be handed besides, read by pytest's
own argument parser from PYTEST_ADDOPTS and the file's addopts: the `-o`
overrides of those keys, the `-p` specs, `--disable-plugin-autoload`.
Nothing of the suite runs: no plugin is loaded, no conftest is imported.
"""

from __future__ import annotations

import json
import os
import sys

KEYS = ("cloudguard", "addopts", "required_plugins")


def gather(directory: str) -> dict[str, object]:
    facts: dict[str, object] = {
        "python": sys.executable,
        "pytest": None,
        "plugin": None,
        "config": None,
        "ignored": [],
        "values": {},
        "error": None,
    }
    from importlib import metadata

    try:
        facts["pytest"] = metadata.version("pytest")
    except metadata.PackageNotFoundError:
        return facts
    for entry in metadata.entry_points(group="pytest11"):
        if entry.name == "cloudguard":
            dist = entry.dist
            facts["plugin"] = {
                "module": entry.value,
                "distribution": dist.metadata["Name"] if dist else "",
                "version": dist.version if dist else "",
            }
    try:
        facts.update(_configuration(directory))
    except Exception as error:  # pytest's own error for a file it cannot read (UsageError, ...)
        facts["error"] = f"{type(error).__name__}: {error}"
    return facts


def _configuration(directory: str) -> dict[str, object]:
    """The file pytest would read from `directory` and what it would be handed besides.

    Asked of pytest's own parts, as `pytest` started here would use them:
    its argument parser reads PYTEST_ADDOPTS (`-c`, `--rootdir`, `-o`, `-p`,
    in every spelling pytest accepts), its `determine_setup` picks the file
    from them, and the parser reads the file's `addopts` after them. No
    plugin is loaded (only pytest's own options are known) and no conftest
    is imported. An older pytest whose parts differ is asked what it can
    answer: the file from `locate_config`, PYTEST_ADDOPTS left to doctor.
    """
    import shlex
    from pathlib import Path

    here = Path(directory)
    environment = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    try:
        return _as_pytest_starts(here, environment)
    except (ImportError, AttributeError, TypeError):  # pytest's parts differ in this version
        pass  # (pytest's own error for a file it cannot read is the answer: not caught here)
    from _pytest.config.findpaths import locate_config

    try:
        found = locate_config(here, [here])
    except TypeError:  # pytest before 8.1: locate_config(args)
        found = locate_config([here])  # type: ignore[call-arg,arg-type]
    inifile, config = found[1], found[2]
    ignored = list(found[3]) if len(found) > 3 else []
    return {
        "config": str(inifile) if inifile else None,
        "ignored": ignored,
        "values": _file_values(config),
    }


def _file_values(config: object) -> dict[str, object]:
    values = {}
    for key in KEYS:
        if key in config:  # type: ignore[operator]
            value = config[key]  # type: ignore[index]
            values[key] = getattr(value, "value", value)  # pytest 9: a ConfigValue
    return values


def _as_pytest_starts(here: object, environment: list[str]) -> dict[str, object]:
    import inspect
    import shlex

    from _pytest.config import get_config
    from _pytest.config.findpaths import determine_setup

    parser = get_config()._parser  # pytest's own options only: no plugin, no conftest
    early = parser.parse_known_args(environment)
    wanted = {
        "inifile": early.inifilename,
        "override_ini": None,  # the file's own values: the overrides are reported apart
        "args": list(early.file_or_dir),
        "rootdir_cmd_arg": early.rootdir or None,
        "invocation_dir": here,
    }
    accepted = inspect.signature(determine_setup).parameters
    found = determine_setup(**{k: v for k, v in wanted.items() if k in accepted})
    inifile, config = found[1], found[2]
    values = _file_values(config)
    addopts = values.get("addopts")
    from_file = (
        [str(w) for w in addopts] if isinstance(addopts, list) else shlex.split(str(addopts or ""))
    )
    # pytest's order: the file's addopts first, then PYTEST_ADDOPTS (the last -o wins).
    later = parser.parse_known_args([*from_file, *environment])
    overrides: dict[str, dict[str, str]] = {}
    for item in later.override_ini or []:
        key, _, value = item.partition("=")
        if key.strip() in KEYS:
            place = "PYTEST_ADDOPTS" if item in (early.override_ini or []) else "addopts"
            overrides[key.strip()] = {"value": value, "from": place}
    plugins = [
        {"spec": spec, "from": "PYTEST_ADDOPTS" if spec in early.plugins else "addopts"}
        for spec in later.plugins
    ]
    return {
        "config": str(inifile) if inifile else None,
        "ignored": list(found[3]) if len(found) > 3 else [],
        "values": values,
        "asked": True,  # pytest's own parser read PYTEST_ADDOPTS and addopts
        "overrides": overrides,
        "plugins": plugins,
        "autoload_off": bool(getattr(later, "disable_plugin_autoload", False)),
    }


if __name__ == "__main__":
    json.dump(gather(os.getcwd()), sys.stdout)
