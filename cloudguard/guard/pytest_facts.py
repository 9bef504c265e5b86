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
the chosen one. Nothing of the suite runs: no conftest is imported.
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
    """The file pytest would read from `directory`, as its own `locate_config` finds it."""
    from pathlib import Path

    from _pytest.config.findpaths import locate_config

    here = Path(directory)
    try:
        found = locate_config(here, [here])
    except TypeError:  # pytest before 8.1: locate_config(args)
        found = locate_config([here])  # type: ignore[call-arg,arg-type]
    inifile, config = found[1], found[2]
    ignored = list(found[3]) if len(found) > 3 else []
    values = {}
    for key in KEYS:
        if key in config:
            value = config[key]
            values[key] = getattr(value, "value", value)  # pytest 9: a ConfigValue
    return {"config": str(inifile) if inifile else None, "ignored": ignored, "values": values}


if __name__ == "__main__":
    json.dump(gather(os.getcwd()), sys.stdout)
