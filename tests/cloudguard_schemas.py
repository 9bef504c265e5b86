"""Validate what cloudguard writes against the JSON Schemas it ships (cloudguard/schemas/).

`validate(name, document)` for one document; `validate_lines(name, path)` for a
JSON Lines file (a reach log, a reap log). The root conftest.py also checks,
in every test, each document the code under test renders in-process.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from cloudguard.schemas import schema_id, schema_path


@cache
def validator(name: str) -> Draft202012Validator:
    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == schema_id(name)
    return Draft202012Validator(schema)


def validate(name: str, document: Any) -> Any:
    """`document` unchanged; AssertionError listing every violation otherwise."""
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        shown = "\n".join(
            f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10]
        )
        raise AssertionError(f"not a valid {name} document:\n{shown}")
    return document


def validate_lines(name: str, path: str | Path) -> list[Any]:
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line]
    for record in records:
        validate(name, record)
    return records
