"""Entry point `pytest11: cloudguard-switch`: `-p no:cloudguard` is never unsaid either.

`-p no:cloudguard` blocks the plugin before it is imported, so the plugin
cannot say it is off. This second entry point of the same distribution is
what pytest still loads then: where the project's configuration file names
the plugin (`switch.declaration`), one line on stderr says the session runs
unguarded and why. Where `required_plugins` names cloudguard-ci it stops
the session instead, as pytest did before this sibling existed: loaded, it
is a plugin of the required distribution, and pytest would count it
("Missing required plugins: cloudguard-ci", a usage error, 4). It does
nothing else, and nothing at all while the plugin is loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Generator

import pytest

from cloudguard.guard.pytest import switch

PLUGIN = "cloudguard"  # the plugin's entry point name, as `-p no:` blocks it
MODULE = "cloudguard.guard.pytest.plugin"


# A wrapper, as the plugin's own: it runs around pytest's capturing of the initial conftests,
# which would swallow the line.
@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    _say_if_blocked(early_config)
    return (yield)


def _say_if_blocked(early_config: pytest.Config) -> None:
    manager = early_config.pluginmanager
    if not manager.is_blocked(PLUGIN) or manager.get_plugin(MODULE) is not None:
        return  # loaded (by its entry point, or named by its module with -p): it speaks
    declared = switch.declaration(early_config)
    if declared is None or not declared.declared:
        return
    if declared.required:
        # This module is of the same distribution: loaded, it would satisfy required_plugins,
        # which stopped such a session before it existed. It stops it, in pytest's words.
        raise pytest.UsageError(
            f"Missing required plugins: {switch.DISTRIBUTION} (-p no:{PLUGIN} blocks the "
            f"plugin {declared.file} requires)"
        )
    sys.stderr.write(
        f"cloudguard: off: -p no:{PLUGIN} blocks the plugin {declared.file} names: "
        "this session's tests run unguarded\n"
    )
    sys.stderr.flush()
