"""How the fleet's tags are written as Google Cloud labels, and read back.

A GCP label key is 1-63 characters of lower-case letters, digits, `_` and `-`,
starting with a letter; a value is 0-63 of the same (no leading-letter rule).
So a fleet that labels on GCP writes the configured tag names (`--task-tag`,
default `task-id`; `--generation-tag`, default `repository-generation`, both
already valid keys) as `label_key(name)`, and their values as
`label_value(value)`: lower-cased, every other character mapped to `_`, cut
to 63 characters (a 40-hex commit and the default names are left as they are).

The audit reads labels back as the resource's tags, as GCP prints them, and
reads a configured tag name as the label key a fleet writes for it (the
adapter's `tag_name`, `label_key`): a configured `Task-Id` finds the label
`task-id`, `fleet.task` the label `fleet_task`. Without it a name no label can
hold would match nothing, and every fleet VM would look like no fleet's: the
audit would say nothing of them. Stdlib only.
"""

from __future__ import annotations

import functools
import re

MAX_LENGTH = 63
_NOT_IN_A_LABEL = re.compile(r"[^a-z0-9_-]")


def label_value(value: str) -> str:
    """`value` as a label can hold it: lower case, `[a-z0-9_-]`, at most 63 characters."""
    return _NOT_IN_A_LABEL.sub("_", value.lower())[:MAX_LENGTH]


@functools.lru_cache(maxsize=256)  # asked for every tag read: a few names, read again and again
def label_key(name: str) -> str:
    """A tag name as a label key: as a value, and starting with a letter (`1x` -> `x1x`)."""
    key = label_value(name)
    if not key or not key[0].isalpha():
        key = ("x" + key)[:MAX_LENGTH]
    return key
