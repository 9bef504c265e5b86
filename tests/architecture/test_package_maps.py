"""Every package of cloudguard names each of its modules in its docstring: the map tells the truth.

A package's `__init__` docstring is where a newcomer reads what is inside. A
module is named there when its docstring shows it as `name` (backticks), as
`name/` or `name.py`, or as the first word(s) of an indented table row
(`    name, other   what they do`). A module added, renamed or moved without
its package's map being told turns this red.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from named_checks import broken

import cloudguard

PACKAGE = Path(cloudguard.__file__).resolve().parent


def members(package: Path) -> list[str]:
    """The modules and subpackages of `package` (not its `__init__`)."""
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    packages = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    return sorted(modules | packages)


def table_rows(doc: str) -> set[str]:
    """The names an indented table row starts with: `    a, b/   text` -> {a, b}."""
    found: set[str] = set()
    for line in doc.splitlines():
        row = re.match(r"^ {2,}(\S.*?)(?: {2,}|$)", line)
        if row:
            found |= {word.strip().rstrip("/") for word in row.group(1).split(",")}
    return found


def named_in(doc: str, name: str) -> bool:
    return name in table_rows(doc) or bool(
        re.search(rf"`{re.escape(name)}[`/ ]|\b{re.escape(name)}\.py\b", doc)
    )


def unnamed() -> list[str]:
    found = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        package = ".".join(init.parent.relative_to(PACKAGE.parent).parts)
        found += [f"{package}.{n}" for n in members(init.parent) if not named_in(doc, n)]
    return found


def test_every_package_docstring_names_each_of_its_modules() -> None:
    missing = unnamed()
    assert not missing, broken(
        [f"unnamed module {name}" for name in missing],
        f"modules their package's docstring does not name: {missing}",
    )


def test_control_a_name_counts_in_backticks_in_a_table_row_or_as_a_file() -> None:
    doc = "Intro.\n\n    seal, refuse   the seal\n    hard/          namespaces\n\n`keeper`, x.py"
    assert all(named_in(doc, n) for n in ("seal", "refuse", "hard", "keeper", "x"))
    assert not named_in(doc, "witness") and not named_in("the keeper holds", "keeper")


# One module per format in each of the two report registries (the audit's formats/, the
# guard's report/): the same name is the same format, on purpose.
FORMAT_PACKAGES = ("cloudguard.audit.formats", "cloudguard.guard.report")
# Collisions not yet renamed (issue 33): each name's modules, to shrink, never to grow.
# None is left: every module of the core says which one it is.
NOT_YET_RENAMED: dict[str, set[str]] = {}


def test_no_two_modules_of_the_core_share_a_name() -> None:
    by_name: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.stem in ("__init__", "__main__"):
            continue
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if module.rpartition(".")[0] in FORMAT_PACKAGES:
            continue
        by_name.setdefault(path.stem, set()).add(module)
    shared = {name: found for name, found in by_name.items() if len(found) > 1}
    grown = {
        name: sorted(found)
        for name, found in shared.items()
        if not found <= NOT_YET_RENAMED.get(name, set())
    }
    assert not grown, broken(
        [f"shared module name {name}" for name in grown],
        f"modules of one name (name one for what it is): {grown}",
    )
