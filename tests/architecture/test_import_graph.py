"""Each adapter's modules import each other without a cycle, and each imports alone.

The session module (credentials, preflight, client options, error
description) is what the sweep and the reaper share; neither imports the
other's module for it. Function-level imports count too: a cycle deferred
into a function is still a cycle.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ADAPTERS = ("cloudguard_azure", "cloudguard_aws", "cloudguard_toycloud")


def modules_of(package: str) -> dict[str, Path]:
    root = Path(importlib.import_module(package).__file__ or "").parent
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_within(package: str, name: str, path: Path) -> set[str]:
    """The package's own modules that `name` imports, at any depth of its code."""
    own = modules_of(package)
    found: set[str] = set()
    tree = ast.parse(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:  # never executed: annotations only
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from pkg import mod` imports the module mod; `from mod import name`, mod.
            targets = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in own else node.module
                for a in node.names
            ]
        else:
            continue
        # A package's own __init__ runs before any of its modules: not an edge of the graph.
        found |= {t for t in targets if t in own and t != name and not name.startswith(t + ".")}
    return found


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target] if target in path else [node, target]
            if state.get(target) is None and (found := visit(target, [*path, target])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if state.get(start) is None and (found := visit(start, [start])):
            return found
    return None


# The fake ARM is the [fake] extra (a test server), not the adapter: its state and its
# Microsoft.Network routes refer to each other (state -> network -> routes -> state, the
# first deferred into a function), which the adapter's own modules must not do.
NOT_THE_ADAPTER = "cloudguard_azure.fake_arm"


@pytest.mark.parametrize("package", ADAPTERS)
def test_an_adapters_modules_import_each_other_without_a_cycle(package: str) -> None:
    graph = {
        name: imports_within(package, name, path)
        for name, path in modules_of(package).items()
        if not name.startswith(NOT_THE_ADAPTER)
    }
    assert cycle_in(graph) is None, f"import cycle in {package}: {' -> '.join(cycle_in(graph))}"


def test_the_cycle_check_sees_a_cycle() -> None:
    # The control: the old layout (adapter <-> reaper) is a cycle to this check.
    assert cycle_in({"a.adapter": {"a.reaper"}, "a.reaper": {"a.adapter"}}) == [
        "a.adapter",
        "a.reaper",
        "a.adapter",
    ]


@pytest.mark.parametrize("package", ["cloudguard_azure", "cloudguard_aws"])
def test_the_sweep_and_the_reaper_share_the_session(package: str) -> None:
    modules = modules_of(package)
    for user in ("adapter", "reaper"):
        name = f"{package}.{user}"
        assert f"{package}.session" in imports_within(package, name, modules[name]), name
    reaper = f"{package}.reaper"
    assert f"{package}.adapter" not in imports_within(package, reaper, modules[reaper])


@pytest.mark.parametrize("package", ADAPTERS)
def test_each_module_imports_alone_in_a_fresh_interpreter(package: str) -> None:
    names = list(modules_of(package))
    code = (
        "import importlib, subprocess, sys\n"
        f"for name in {names!r}:\n"
        "    done = subprocess.run([sys.executable, '-c', f'import {name}'], capture_output=True,"
        " text=True)\n"
        "    if done.returncode:\n"
        "        print(name, done.stderr.strip().splitlines()[-1])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout == "", f"modules that do not import alone:\n{done.stdout}"
