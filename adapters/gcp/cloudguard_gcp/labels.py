"""How the fleet's tags are written as Google Cloud labels, and read back.

A GCP label key is 1-63 characters of lower-case letters, digits, `_` and `-`,
starting with a letter; a value is 0-63 of the same (no leading-letter rule).
So a fleet that labels on GCP writes the configured tag names (`--task-tag`,
default `task-id`; `--generation-tag`, default `repository-generation`, both
already valid keys) as `label_key(name)`, and their values as
`label_value(value)`: lower-cased, every other character mapped to `_`, cut
to 63 characters (a 40-hex commit and the default names are left as they are).

The audit reads labels back as the resource's tags, as GCP prints them. It
compares tag names case-insensitively for GCP (the adapter's
`case_insensitive_names`): a configured `Task-Id` finds the label `task-id`.
Not yet: a configured name with a character a label cannot hold (`fleet.task`)
is not mapped on the audit's side; configure the label key itself
(`--task-tag fleet_task`). Stdlib only.
"""

from __future__ import annotations

import re

MAX_LENGTH = 63
_NOT_IN_A_LABEL = re.compile(r"[^a-z0-9_-]")


def label_value(value: str) -> str:
    """`value` as a label can hold it: lower case, `[a-z0-9_-]`, at most 63 characters."""
    return _NOT_IN_A_LABEL.sub("_", value.lower())[:MAX_LENGTH]


def label_key(name: str) -> str:
    """A tag name as a label key: as a value, and starting with a letter (`1x` -> `x1x`)."""
    key = label_value(name)
    if not key or not key[0].isalpha():
        key = ("x" + key)[:MAX_LENGTH]
    return key
