"""`--report json=FILE`: the records whole, placed, with the verdict (schema reach-report 1)."""

from __future__ import annotations

import json

from cloudguard.guard import hints
from cloudguard.guard.report import ReachReport

SCHEMA_ID = "urn:cloudguard-ci:schema:reach-report:1"  # cloudguard/schemas/reach-report.schema.json


def render(report: ReachReport) -> str:
    document = {
        "$schema": SCHEMA_ID,
        "schema": 1,
        "kind": "reach-report",
        "by": report.by,
        "log": report.log,
        "exit_code": report.exit_code,
        "summary": report.headline(),
        "reaches": [
            {
                "test": entry.test,
                "file": entry.file,
                "line": entry.line,
                "phase": entry.field("phase"),
                "fixture": entry.field("fixture"),
                "again": entry.again,
                "hint": hints.for_channel(entry.field("via")),
                "record": dict(entry.record),
            }
            for entry in report.entries
        ],
        "problems": list(report.problems),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
