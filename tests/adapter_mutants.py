"""Negative controls for adapter packages (cloudguard_azure, cloudguard_aws).

The same harness as cloudguard_mutants.py, for a rule that lives in an adapter:
copy the adapter package, break the rule in the copy, run the named tests with
the copy first on PYTHONPATH, and require each to fail with the expected text in
its own failure message.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from cloudguard_mutants import Mutation, assert_each_red_for_its_reason, run_tests


def _mutant_adapter(
    tmp_path: Path, package: str, mutation: Mutation, also: tuple[tuple[str, str], ...]
) -> Path:
    source_dir = Path(importlib.import_module(package).__file__ or "").resolve().parent
    root = tmp_path / "mutant"
    shutil.copytree(source_dir, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    target = root / package / mutation.module
    text = target.read_text()
    for original, broken in ((mutation.original, mutation.broken), *also):
        assert text.count(original) == 1, f"mutation {mutation.name!r} no longer applies"
        text = text.replace(original, broken)
    target.write_text(text)
    return root


def assert_adapter_turns_red(
    tmp_path: Path, package: str, mutation: Mutation, also: tuple[tuple[str, str], ...] = ()
) -> None:
    """`also`: further (original, broken) edits of the same module, for a rule guarded twice."""
    root = _mutant_adapter(tmp_path, package, mutation, also)
    assert_each_red_for_its_reason(root, mutation, run_tests(root, mutation.tests))
