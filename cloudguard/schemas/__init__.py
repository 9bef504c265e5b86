"""JSON Schemas (draft 2020-12) of what cloudguard writes, shipped in the package.

Each document cloudguard writes names its schema in a `$schema` member (the
reach log in its armed header only, so the refusers' fast path stays lean):

    audit-report  `cloudguard audit --format json`
    reap-plan     `cloudguard reap plan`
    reap-log      one line of a `cloudguard reap apply` log (JSON Lines)
    reach-log     one line of a reach log (JSON Lines)
    notification  what a `[notify]` webhook of kind "json" receives
    reach-report  `--report json=FILE` of `cloudguard run`, `check` and the pytest plugin

The ids are URNs: the files travel with the package, not from a web server.
`schema_path(name)` finds one on disk, e.g. for `check-jsonschema --schemafile`.
"""

from __future__ import annotations

from pathlib import Path

NAMES = ("audit-report", "reap-plan", "reap-log", "reach-log", "notification", "reach-report")
# Schema versions other than 1 (reap-plan 2: items carry the reviewed identity, uid and created;
# 3: the plan binds where its audit read the evidence; 4: the kinds holding data it may
# delete, and what each item holds; audit-report 2: what changed since the last audit,
# acknowledgements, --fail-on new).
_VERSIONS = {"reap-plan": 4, "audit-report": 2}


def schema_id(name: str) -> str:
    if name not in NAMES:
        raise ValueError(f"unknown schema {name!r} (known: {', '.join(NAMES)})")
    return f"urn:cloudguard-ci:schema:{name}:{_VERSIONS.get(name, 1)}"


def schema_path(name: str) -> Path:
    schema_id(name)  # validates the name
    return Path(__file__).with_name(f"{name}.schema.json")
