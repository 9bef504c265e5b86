"""`--report sarif=FILE`: SARIF 2.1.0 for code scanning, each result at the test's file and line.

One rule, `cloudguard/cloud-reach`; one result per test a reach failed, its
physical location the test's file (relative to pytest's rootdir, which is
usually the repository's root: `%SRCROOT%`) and the line of its `def`, so a
code-scanning upload or an annotation points at the test. The message names
the reach, the phase and the fixture or class setup that made it, and the
fix. A reach no test or file is known for (a command that is not pytest, a
session fixture's teardown after the last test) has no place in the code:
it is a notification of the run, which code scanning shows on the analysis;
SARIF results without a location are refused by GitHub's upload.

A result's fingerprint hashes what identifies the reach in the suite (the
test, the channel, the target, the phase and fixture), not its time or pid,
so the same reach is the same alert from one run to the next.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cloudguard import __version__
from cloudguard.escape import inert, sarif_text, sarif_uri
from cloudguard.guard import alarm, hints
from cloudguard.guard.report import Entry, ReachReport

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULE = "cloudguard/cloud-reach"
FINGERPRINT = "cloudguardReach/v1"


def render(report: ReachReport) -> str:
    placed = [entry for entry in report.entries if entry.file]
    unplaced = [entry for entry in report.entries if not entry.file]
    notifications = [
        *(_notification("cloudguard/unplaced-reach", _message(entry)) for entry in unplaced),
        *(_notification("cloudguard/untrusted-log", inert(what, 500)) for what in report.problems),
    ]
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {
                    "name": "cloudguard", "version": __version__,
                    "semanticVersion": __version__, "rules": [_rule()],
                }},
                "invocations": [{
                    "executionSuccessful": not report.problems,
                    "exitCode": report.exit_code,
                    "toolExecutionNotifications": notifications,
                }],
                "results": [_result(entry) for entry in placed],
                "properties": {"summary": report.headline(), "reachLog": report.log},
            }
        ],
    }  # fmt: skip
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _rule() -> dict[str, Any]:
    short = "A test reached for a real cloud (refused before any packet left, and recorded)"
    how = (
        "Make the test hermetic: a mock above the socket, a fake on loopback, a fake CLI or "
        "provider of its own. The message names the channel and its fix."
    )
    return {
        "id": RULE,
        "name": "CloudReach",
        "shortDescription": {"text": short},
        "fullDescription": {"text": f"{short}. {how}"},
        "help": {"text": how},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["test-hygiene", "cloud"]},
    }


def _result(entry: Entry) -> dict[str, Any]:
    region = {"region": {"startLine": entry.line}} if entry.line else {}
    return {
        "ruleId": RULE,
        "ruleIndex": 0,
        "level": "error",
        "message": {"text": _message(entry)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": sarif_uri(entry.file), "uriBaseId": "%SRCROOT%"},
                    **region,
                },
                "logicalLocations": [{"fullyQualifiedName": entry.test, "kind": "function"}]
                if entry.test
                else [],
            }
        ],
        "partialFingerprints": {FINGERPRINT: _fingerprint(entry)},
        "properties": {
            "test": entry.test,
            "phase": entry.field("phase"),
            "fixture": entry.field("fixture"),
            "again": entry.again,
            "via": entry.field("via"),
            "target": entry.field("target"),
            "operation": entry.field("operation"),
        },
    }


def _message(entry: Entry) -> str:
    reached = alarm.named(entry.record)
    who = f"test {entry.test}" if entry.test else "code outside any test"
    during = f" during {entry.where}" if entry.where else ""
    again = (
        f" It failed on the refusal raised again for it: recorded for {entry.field('test')}."
        if entry.again
        else ""
    )
    fix = " ".join(hints.for_channel(entry.field("via")).split())
    text = f"{who} reached a real cloud: {reached}{during}.{again} To make it hermetic: {fix}"
    return sarif_text(inert(text, 2000))


def _notification(descriptor: str, text: str) -> dict[str, Any]:
    return {
        "level": "error",
        "message": {"text": sarif_text(text)},
        "descriptor": {"id": descriptor},
    }


def _fingerprint(entry: Entry) -> str:
    fields = (entry.test, *(entry.field(k) for k in ("via", "target", "phase", "fixture")))
    return hashlib.sha256("\x1f".join(fields).encode("utf-8")).hexdigest()
