"""The import graph of cloudguard and of each adapter: no cycle, and every arrow points down.

Function-level imports count too: a cycle or an arrow back up deferred into
a function is still one. Imports under `if TYPE_CHECKING:` count for cycles
(two modules that name each other's types are one module to read, whichever
import runs) but not for layering (they never run: annotations only). A
module's import of the packages that contain it counts for neither (a
package's `__init__` runs before any of its modules). Names imported by
string (`importlib.import_module`) are not seen.

The one cycle allowed (`ALLOWED_CYCLES`) is the fake ARM's, type-only both
ways: `state.ArmState` is the facade that holds every service's models (as
moto's backends hold theirs), and a service's model functions take that
facade as their argument. Splitting the facade's type from its holdings
would make a second facade to keep in step, for a test fake.

The layers, each importing only from itself and the layers named beside it:

    base       cloudguard, exit_codes, escape, json_input, private_files, project_file, schemas
    acks       acknowledgements: base
    history    history/ (the store): base, acks
    notify     notify/ (webhooks): base, the history's records
    guard      guard/, pytest_plugin: base, and the reach log's document
    cloud      the kernel: base, and the guard's one rule for loopback (guard.hosts)
    documents  base, cloud, acks, the history's records (the reach log's reader: its fast
               writer, guard.reach)
    audit      base, cloud, documents, acks, history, notify
    reap       base, cloud, documents, audit, acks, history
    settings   base, cloud, documents, audit, acks, history, notify: options to the engines'
               requests (no engine imports it)
    cli        anything (cli, __main__)

An adapter imports of cloudguard the kernel only (`cloudguard.cloud`). The
Azure demo (`cloudguard demo`, a program the adapter ships) also returns the
core's exit codes.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from named_checks import broken

CORE = "cloudguard"
ADAPTERS = ("cloudguard_azure", "cloudguard_aws", "cloudguard_toycloud")

BASE = (
    "cloudguard",
    "cloudguard.exit_codes",
    "cloudguard.escape",
    "cloudguard.json_input",
    "cloudguard.private_files",
    "cloudguard.project_file",
    "cloudguard.schemas",
    "cloudguard.trust_store",
)
# A module of the layer on the left may import, of cloudguard, what is on the right
# (`x.*`: x and every module under it). The longest prefix names a module's layer.
ACKS = "cloudguard.acknowledgements"
HISTORY_RECORDS = "cloudguard.history.store_records"
LAYERS: dict[str, tuple[str, ...]] = {
    **{module: BASE for module in BASE},
    ACKS: (*BASE, ACKS),
    "cloudguard.history": (*BASE, ACKS, "cloudguard.history.*"),
    "cloudguard.notify": (*BASE, HISTORY_RECORDS, "cloudguard.notify.*"),
    "cloudguard.guard": (*BASE, "cloudguard.guard.*", "cloudguard.documents.reach_log"),
    "cloudguard.pytest_plugin": (
        *BASE,
        "cloudguard.pytest_plugin.*",
        "cloudguard.guard.*",
        "cloudguard.documents.reach_log",
    ),
    "cloudguard.cloud": (*BASE, "cloudguard.cloud.*", "cloudguard.guard.hosts"),
    "cloudguard.documents": (
        *BASE,
        ACKS,
        HISTORY_RECORDS,
        "cloudguard.cloud.*",
        "cloudguard.documents.*",
    ),
    # The reach log's strict reader shares its format with the fast writer, which stays on
    # the shims' path in the guard (stdlib only): the one document that reads from the guard.
    "cloudguard.documents.reach_log": (*BASE, "cloudguard.documents.*", "cloudguard.guard.reach"),
    "cloudguard.audit": (
        *BASE,
        ACKS,
        "cloudguard.history.*",
        "cloudguard.notify.*",
        "cloudguard.cloud.*",
        "cloudguard.documents.*",
        "cloudguard.audit.*",
    ),
    "cloudguard.reap": (
        *BASE,
        ACKS,
        "cloudguard.history.*",
        "cloudguard.cloud.*",
        "cloudguard.documents.*",
        "cloudguard.audit.*",
        "cloudguard.reap.*",
    ),
    # Above the engines, below the command line: it builds the engines' requests, and the
    # engines (audit, reap, history) do not import it.
    "cloudguard.settings": (
        *BASE,
        ACKS,
        "cloudguard.history.*",
        "cloudguard.notify.*",
        "cloudguard.cloud.*",
        "cloudguard.documents.*",
        "cloudguard.audit.*",
        "cloudguard.settings.*",
    ),
    "cloudguard.cli": ("cloudguard.*",),
    "cloudguard.__main__": ("cloudguard.*",),
    **{adapter: ("cloudguard.cloud.*",) for adapter in ADAPTERS},
    "cloudguard_azure.demo": ("cloudguard.cloud.*", "cloudguard.exit_codes"),
}


def modules_of(package: str) -> dict[str, Path]:
    """Every module of the installed (or, under a negative control, mutated) `package`."""
    root = Path(importlib.import_module(package).__file__ or "").parent
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported_by(
    name: str, path: Path, known: Iterable[str], *, type_only: bool = False
) -> set[str]:
    """The modules among `known` that module `name` imports, at any depth of its code
    (with `type_only`, under `if TYPE_CHECKING:` too)."""
    known = set(known)
    tree = ast.parse(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only and not type_only:  # never executed: annotations only
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from pkg import mod` imports the module mod; `from mod import name`, mod.
            targets = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                for a in node.names
            ]
        else:
            continue
        found |= {t for t in targets if t in known and t != name and not name.startswith(t + ".")}
    return found


def import_graph(packages: Iterable[str], *, type_only: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of `packages` (and of cloudguard) it imports (with `type_only`,
    for annotations too)."""
    modules: dict[str, Path] = {}
    for package in (CORE, *packages):
        modules.update(modules_of(package))
    return {
        name: imported_by(name, path, modules, type_only=type_only)
        for name, path in modules.items()
    }


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules, each named from its
    first module in name order: `[a, b, a]` for a -> b -> a."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(group)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(_cycle_through(min(group), group, graph) for group in groups)


def _cycle_through(start: str, group: set[str], graph: Mapping[str, set[str]]) -> list[str]:
    """The shortest way from `start` back to itself inside `group`."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.get(node, set()) & group):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"{start} is in no cycle of {sorted(group)}")


def layer_of(module: str) -> str | None:
    owners = [layer for layer in LAYERS if module == layer or module.startswith(layer + ".")]
    return max(owners, key=len) if owners else None


def allowed(target: str, rules: tuple[str, ...]) -> bool:
    return any(
        target == rule.removesuffix(".*") or (rule.endswith(".*") and target.startswith(rule[:-1]))
        for rule in rules
    )


def arrows_back_up(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import of cloudguard a module's layer does not allow, as `a -> b (why)`."""
    found = []
    for module in sorted(graph):
        layer = layer_of(module)
        for target in sorted(graph[module]):
            if not target.startswith(f"{CORE}.") and target != CORE:
                continue  # an adapter's own modules, or another adapter's
            if layer is None or not allowed(target, LAYERS[layer]):
                rules = ", ".join(LAYERS[layer]) if layer else "nothing: it has no layer"
                found.append(f"{module} -> {target} ({layer} may import {rules})")
    return found


# The one cycle allowed, by its first module (see the module's docstring): type-only both ways.
ALLOWED_CYCLES = (
    [
        "cloudguard_azure.fake_arm.authorization.models",
        "cloudguard_azure.fake_arm.state",
        "cloudguard_azure.fake_arm.authorization.models",
    ],
)


def test_no_module_of_cloudguard_or_an_adapter_is_in_an_import_cycle() -> None:
    found = [c for c in cycles(import_graph(ADAPTERS, type_only=True)) if c not in ALLOWED_CYCLES]
    shown = "\n".join(" -> ".join(cycle) for cycle in found)
    edges = [f"cycle edge {a} -> {b}" for cycle in found for a, b in itertools.pairwise(cycle)]
    assert not found, broken(edges, f"import cycles:\n{shown}")


def test_every_arrow_points_down() -> None:
    found = arrows_back_up(import_graph(ADAPTERS))
    shown = "\n".join(found)
    assert not found, broken(
        [f"arrow {arrow.split(' (')[0]}" for arrow in found],
        f"imports the layers do not allow:\n{shown}",
    )


def test_every_module_has_a_layer() -> None:
    # A new top-level module or package must be placed, or nothing checks its arrows.
    unplaced = [m for m in import_graph(ADAPTERS) if layer_of(m) is None]
    assert not unplaced, f"modules in no layer (add them to LAYERS): {unplaced}"


# -- the checks see what they must see ----------------------------------------------------


def test_control_the_cycle_check_names_a_cycle_from_its_first_module() -> None:
    planted = {
        "a.reaper": {"a.adapter"},
        "a.adapter": {"a.session", "a.reaper"},
        "a.session": set(),
    }
    assert cycles(planted) == [["a.adapter", "a.reaper", "a.adapter"]]
    assert cycles({"a.x": {"a.y"}, "a.y": set()}) == []


def test_control_an_arrow_back_up_is_named_with_the_rule_it_breaks() -> None:
    graph = import_graph(ADAPTERS)
    graph["cloudguard.cloud.records"] = {
        *graph["cloudguard.cloud.records"],
        "cloudguard.audit.auditor",
    }
    (found,) = arrows_back_up(graph)
    assert found.startswith(
        "cloudguard.cloud.records -> cloudguard.audit.auditor (cloudguard.cloud"
    )


def test_control_function_level_imports_count_and_type_checking_ones_do_not(
    tmp_path: Path,
) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from cloudguard.audit import auditor\n"
        "def later():\n    from cloudguard.reap import apply\n"
    )
    known = {"cloudguard.audit.auditor", "cloudguard.reap.apply"}
    assert imported_by("m", module, known) == {"cloudguard.reap.apply"}
    assert imported_by("m", module, known, type_only=True) == known  # for cycles: both


def test_no_cycle_counted_with_type_only_imports_is_in_the_core() -> None:
    # The allowed cycle is an adapter's test fake: the core has none, even for annotations.
    found = cycles(import_graph((), type_only=True))
    assert not [c for c in found if c[0].startswith(f"{CORE}.")], found


# -- within each adapter ----------------------------------------------------------------------


@pytest.mark.parametrize("package", ["cloudguard_azure", "cloudguard_aws"])
def test_the_sweep_and_the_reaper_share_the_session(package: str) -> None:
    modules = modules_of(package)
    for user in ("adapter", "reaper"):
        name = f"{package}.{user}"
        assert f"{package}.session" in imported_by(name, modules[name], modules), name
    reaper = f"{package}.reaper"
    assert f"{package}.adapter" not in imported_by(reaper, modules[reaper], modules)


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
