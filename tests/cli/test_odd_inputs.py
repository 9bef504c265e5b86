"""Every odd or hostile input gets one line saying what is wrong, and the exit code it means.

2 usage (a bad option value or argument), 75 did not run (an input that cannot
be read: named on stderr and in the report), 97 bad config or a document that
is not what it claims; never a traceback, and never 1, which means "orphans
found" (`audit`). One row per input, through the whole command (issue 25 fed
cloudguard more than 100 of them: `--grace 99999999999999999999d` and a
100,000-deep JSON were tracebacks that exited 1). Each row is the exit code
and words the message must carry on one line of stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cloudguard

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))
from audit_helpers import aws_instance, aws_instances, azure_vm
from named_checks import broken

CLOUDGUARD = Path(sys.executable).parent / "cloudguard"


def _vm(**fields: Any) -> dict[str, Any]:
    vm = azure_vm("vm-x", tags={"task-id": "t1"})
    vm.update(fields)
    return {k: v for k, v in vm.items() if v is not _DROP}


_DROP = object()


def _json(document: Any) -> bytes:
    return json.dumps(document).encode()


def _ec2(**fields: Any) -> bytes:
    return _json(aws_instances({**aws_instance("i-1", tags={"task-id": "t"}), **fields}))


AZ = _json([_vm()])
DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
LONG_NUMBER = b"9" * 10_000
AUDIT = ("audit", "-i", "az.json")  # a readable inventory, for rows about something else


@dataclass(frozen=True)
class Row:
    argv: tuple[str, ...]
    code: int
    says: str  # on one line of stderr
    files: Mapping[str, bytes] = field(default_factory=dict)


def row(*argv: str, code: int, says: str, **files: bytes) -> Row:
    named = {name.replace("__", "."): data for name, data in files.items()}
    if "az.json" in argv and "az__json" not in files:
        named["az.json"] = AZ
    return Row(argv, code, says, named)


ROWS: dict[str, Row] = {
    # -- durations: no unit, no sign, no century and more ------------------------------
    "grace 20 digits of days": row(*AUDIT, "--grace", "99999999999999999999d", code=2,
                                   says="--grace: too long: at most 36500d"),
    "grace of 9e12 hours": row(*AUDIT, "--grace", "9999999999999h", code=2, says="too long"),
    "grace negative": row(*AUDIT, "--grace", "-1h", code=2, says="--grace: not a duration"),
    "grace empty": row(*AUDIT, "--grace", "", code=2, says="--grace: not a duration"),
    "grace bare number": row(*AUDIT, "--grace", "5", code=2, says="not a duration"),
    "grace fraction": row(*AUDIT, "--grace", "1.5h", code=2, says="not a duration"),
    "grace arabic-indic digit": row(*AUDIT, "--grace", "\u0661h", code=2, says="not a duration"),
    "owned-ids timeout zero": row(*AUDIT, "--owned-ids-timeout", "0s", code=2,
                                  says="expected a duration above zero"),
    "owned-ids timeout past a day": row(*AUDIT, "--owned-ids-timeout", "99999999999999d",
                                        code=2, says="--owned-ids-timeout: too long: at most 1d"),
    "max-age 20 digits": row("reap", "apply", "p.json", "--max-age", "99999999999999999999d",
                             code=2, says="--max-age: too long", p__json=b"{}"),
    # -- other option values -----------------------------------------------------------
    "concurrency zero": row(*AUDIT, "--concurrency", "0", code=2, says="--concurrency"),
    "concurrency not a number": row(*AUDIT, "--concurrency", "abc", code=2,
                                    says="valid integer"),
    "format xml": row(*AUDIT, "-f", "xml", code=2, says="'xml' is not one of table"),
    "format empty": row(*AUDIT, "-f", "", code=2, says="'' is not one of table"),
    "report without a file": row(*AUDIT, "--report", "json", code=2, says="FORMAT=FILE"),
    "report with an empty file": row(*AUDIT, "--report", "json=", code=2, says="FORMAT=FILE"),
    "report of an unknown format": row(*AUDIT, "--report", "pdf=a", code=2, says="FORMAT=FILE"),
    "fail-on unknown": row(*AUDIT, "--fail-on", "foo", code=2,
                           says="'foo' is not one of orphan, suspect, unverified"),
    "fail-on unverified and allow-unverified": row(
        *AUDIT, "--fail-on", "unverified", "--allow-unverified", code=2,
        says="--fail-on unverified and --allow-unverified say opposite things"),
    "leaked-by without =": row(*AUDIT, "--leaked-by", "x", code=2, says="expected KEY=VALUE"),
    "leaked-by without key": row(*AUDIT, "--leaked-by", "=v", code=2, says="expected KEY=VALUE"),
    "task-tag empty": row(*AUDIT, "--task-tag", "", code=2,
                          says="--task-tag: expected a tag name, got ''"),
    "task-tag blank": row(*AUDIT, "--task-tag", " ", code=2, says="expected a tag name"),
    "generation-tag empty": row(*AUDIT, "--generation-tag", "", code=2,
                                says="--generation-tag: expected a tag name"),
    "owned-ids-command empty": row(*AUDIT, "--owned-ids-command", "", code=2,
                                   says="expected a command"),
    "owned-ids-command unbalanced quote": row(*AUDIT, "--owned-ids-command", "'a", code=2,
                                              says="cannot split into words"),
    "provider unknown": row("audit", "--provider", "oracle", code=2,
                            says="unknown provider 'oracle'"),
    "provider empty": row("audit", "--provider", "", code=2, says="unknown provider ''"),
    "subscription without provider": row(*AUDIT, "-s", "x", code=2,
                                         says="--subscription applies to a live sweep"),
    "credential unknown": row("audit", "-p", "azure", "--credential", "nope", code=2,
                              says="unknown credential 'nope' for provider azure"),
    "unknown option": row("audit", "--frobnicate", code=2, says="No such option: --frobnicate"),
    "extra argument": row(*AUDIT, "extra", code=2, says="unexpected extra argument"),
    "stdin twice": row("audit", "-i", "-", "-i", "-", code=2,
                       says="stdin (-) can feed only one"),
    "nothing to audit, outside a repository": row(
        "audit", code=2, says="(not inside a git repository, so no parent is searched)"),
    # -- file options checked when parsed (issue 36): 2, the option named ------------------
    "ca-bundle missing": row(*AUDIT, "--ca-bundle", "nope.pem", code=2,
                             says="Invalid value for --ca-bundle: nope.pem: No such file"),
    "ca-bundle a directory": row(*AUDIT, "--ca-bundle", ".", code=2,
                                 says="--ca-bundle: . is a directory: expected a readable file"),
    "ca-bundle a device": row(*AUDIT, "--ca-bundle", "/dev/null", code=2,
                              says="/dev/null is not a regular file"),
    # -- outputs that cannot be written ------------------------------------------------
    "output is a directory": row(*AUDIT, "-o", ".", code=75, says="cannot write --output ."),
    "output in a missing directory": row(*AUDIT, "-o", "no/x", code=75,
                                         says="cannot write --output no/x"),
    "output is a device": row(*AUDIT, "-o", "/dev/full", code=75, says="not a regular file"),
    "report into a directory": row(*AUDIT, "--report", "json=.", code=75,
                                   says="cannot write --report json=."),
    # -- inventories that cannot be read (75, the file named) ----------------------------
    "inventory missing": row("audit", "-i", "nope.json", code=75,
                             says="could not read inventory nope.json"),
    "inventory is a directory": row("audit", "-i", ".", code=75, says="Is a directory"),
    "inventory empty": row("audit", "-i", "e.json", code=75, says="empty file", e__json=b""),
    "inventory blank": row("audit", "-i", "e.json", code=75, says="empty file",
                           e__json=b" \n\t"),
    "inventory not JSON": row("audit", "-i", "e.json", code=75, says="malformed JSON",
                              e__json=b"hello"),
    "inventory 100,000 lists deep": row("audit", "-i", "d.json", code=75,
                                        says="malformed JSON: nested too deeply", d__json=DEEP),
    "inventory 100,000 objects deep": row("audit", "-i", "d.json", code=75,
                                          says="nested too deeply", d__json=DEEP_OBJECT),
    "an entry 100,000 deep": row("audit", "-i", "d.json", code=75, says="nested too deeply",
                                 d__json=b"[" + DEEP_OBJECT + b"]"),
    "a 10,000-digit number": row("audit", "-i", "d.json", code=75,
                                 says="unreadable value: Exceeds the limit (4300 digits)",
                                 d__json=b"[" + LONG_NUMBER + b"]"),
    "a 10,000-digit tag value": row("audit", "-i", "d.json", code=75, says="4300 digits",
                                    d__json=AZ.replace(b'"t1"', LONG_NUMBER)),
    "NaN": row("audit", "-i", "d.json", code=75, says="entry 0 is not", d__json=b"[NaN]"),
    "not UTF-8": row("audit", "-i", "d.json", code=75, says="cannot read",
                     d__json=bytes(range(256))),
    "null": row("audit", "-i", "d.json", code=75, says="not an inventory", d__json=b"null"),
    "a string": row("audit", "-i", "d.json", code=75, says="not an inventory", d__json=b'"x"'),
    "a number": row("audit", "-i", "d.json", code=75, says="not an inventory", d__json=b"1"),
    "a list of numbers": row("audit", "-i", "d.json", code=75, says="entry 0 is not",
                             d__json=b"[1, 2]"),
    "a list of null": row("audit", "-i", "d.json", code=75, says="entry 0 is not",
                          d__json=b"[null]"),
    "an object of nobody's": row("audit", "-i", "d.json", code=75, says="not an inventory",
                                 d__json=b'{"value": []}'),
    "trailing comma": row("audit", "-i", "d.json", code=75, says="malformed JSON",
                          d__json=b'[{"id": "x"},]'),
    "two documents": row("audit", "-i", "d.json", code=75, says="Extra data",
                         d__json=AZ + b"[]"),
    # -- an az VM object of the wrong shape: refused, the entry and field named ------------
    "az id a number": row("audit", "-i", "d.json", code=75, says="no string `id`",
                          d__json=_json([_vm(id=5)])),
    "az id empty": row("audit", "-i", "d.json", code=75, says="entry 0: VM (no id): id: empty",
                       d__json=_json([_vm(id="")])),
    "az tags as a list": row("audit", "-i", "d.json", code=75,
                             says="entry 0: VM vm-x: tags: expected an object of name: value, "
                             "got a list",
                             d__json=_json([_vm(tags=[{"key": "task-id", "value": "t"}])])),
    "az tags as text": row("audit", "-i", "d.json", code=75, says="tags: expected an object",
                           d__json=_json([_vm(tags="task-id=t")])),
    "az tag value an object": row("audit", "-i", "d.json", code=75,
                                  says="the value of 'task-id' is an object, not text",
                                  d__json=_json([_vm(tags={"task-id": {"a": 1}})])),
    "az timeCreated a number": row("audit", "-i", "d.json", code=75,
                                   says="timeCreated: expected text, got a number",
                                   d__json=_json([_vm(timeCreated=5)])),
    "az name a list": row("audit", "-i", "d.json", code=75, says="name: expected text",
                          d__json=_json([_vm(name=["a"])])),
    "az hardwareProfile text": row("audit", "-i", "d.json", code=75,
                                   says="hardwareProfile: expected an object",
                                   d__json=_json([_vm(hardwareProfile="big")])),
    "az vmSize a list": row("audit", "-i", "d.json", code=75, says="vmSize: expected text",
                            d__json=_json([_vm(hardwareProfile={"vmSize": ["a"]})])),
    "az powerState a number": row("audit", "-i", "d.json", code=75,
                                  says="powerState: expected text",
                                  d__json=_json([_vm(powerState=3)])),
    "az location an object": row("audit", "-i", "d.json", code=75, says="location: expected",
                                 d__json=_json([_vm(location={"a": 1})])),
    "az resourceGroup a number": row("audit", "-i", "d.json", code=75,
                                     says="resourceGroup: expected text",
                                     d__json=_json([_vm(resourceGroup=7)])),
    # -- readable, with a warning where something is unknown (1: the VM is unjudged) ------
    "az timeCreated unparseable": row("audit", "-i", "d.json", code=1,
                                      says="with no creation time, or one that is not an "
                                      "ISO 8601 time: age unknown",
                                      d__json=_json([_vm(timeCreated="yesterday")])),
    "az timeCreated year 1 east of UTC": row(
        "audit", "-i", "d.json", code=1, says="age unknown",
        d__json=_json([_vm(timeCreated="0001-01-01T00:00:00+14:00")])),
    "az timeCreated year 9999 west of UTC": row(
        "audit", "-i", "d.json", code=1, says="age unknown",
        d__json=_json([_vm(timeCreated="9999-12-31T23:59:59-12:00")])),
    "az without powerState": row("audit", "-i", "d.json", code=1, says="with no power state",
                                 d__json=_json([_vm(powerState=_DROP)])),
    "az export with a byte-order mark": row("audit", "-i", "d.json", code=1,
                                            says="unverified", d__json=b"\xef\xbb\xbf" + AZ),
    "az export in UTF-16 (Windows PowerShell)": row(
        "audit", "-i", "d.json", code=1, says="unverified",
        d__json=AZ.decode().encode("utf-16")),
    # -- EC2 of the wrong shape ----------------------------------------------------------
    "ec2 Reservations an object": row("audit", "-i", "d.json", code=75,
                                      says="`Reservations` is not a list",
                                      d__json=_json({"Reservations": {}})),
    "ec2 Instances an object": row("audit", "-i", "d.json", code=75,
                                   says="not an object with an Instances list",
                                   d__json=_json({"Reservations": [{"Instances": {}}]})),
    "ec2 instance a string": row("audit", "-i", "d.json", code=75,
                                 says="no string InstanceId",
                                 d__json=_json({"Reservations": [{"Instances": ["i-1"]}]})),
    "ec2 InstanceId a number": row("audit", "-i", "d.json", code=75,
                                   says="no string InstanceId",
                                   d__json=_json([{"InstanceId": 5}])),
    "ec2 Tags an object": row("audit", "-i", "d.json", code=75,
                              says="instance i-1: Tags: expected a list of {Key, Value}",
                              d__json=_ec2(Tags={"task-id": "x"})),
    "ec2 Tags of text": row("audit", "-i", "d.json", code=75, says="Tags: an entry is not",
                            d__json=_ec2(Tags=["x"])),
    "ec2 tag Key a number": row("audit", "-i", "d.json", code=75,
                                says="Tags: an entry is not {Key, Value} with a text Key",
                                d__json=_ec2(Tags=[{"Key": 5, "Value": "x"}])),
    "ec2 State text": row("audit", "-i", "d.json", code=75,
                          says="instance i-1: State: expected an object",
                          d__json=_ec2(State="running")),
    "ec2 Placement text": row("audit", "-i", "d.json", code=75,
                              says="Placement: expected an object", d__json=_ec2(Placement="x")),
    "ec2 LaunchTime unparseable": row("audit", "-i", "d.json", code=1, says="age unknown",
                                      d__json=_ec2(LaunchTime="soon")),
    "ec2 list of lists of numbers": row("audit", "-i", "d.json", code=75,
                                        says="no string InstanceId", d__json=b"[[5]]"),
    # -- evidence that cannot be read (75, named) ----------------------------------------
    "controller home missing": row(*AUDIT, "--controller-home", "nohome", code=75,
                                   says="could not read controller home nohome"),
    "controller home a file": row(*AUDIT, "--controller-home", "az.json", code=75,
                                  says="not a directory"),
    "controller records 100,000 deep": row(*AUDIT, "--controller-records", "c.json", code=75,
                                           says="nested too deeply", c__json=DEEP_OBJECT),
    "controller records a list": row(*AUDIT, "--controller-records", "c.json", code=75,
                                     says='expected {"tasks"', c__json=b"[]"),
    "controller records tasks a number": row(*AUDIT, "--controller-records", "c.json",
                                             code=75, says="`tasks` is not a list",
                                             c__json=b'{"tasks": 5}'),
    "controller records a task without id": row(*AUDIT, "--controller-records", "c.json",
                                                code=75, says="tasks[0] names no task",
                                                c__json=b'{"tasks": [{}]}'),
    "controller records a 5,000-digit task": row(*AUDIT, "--controller-records", "c.json",
                                                 code=75, says="4300 digits",
                                                 c__json=b'{"tasks": [' + LONG_NUMBER + b"]}"),
    "repo not a repository": row(*AUDIT, "--repo", ".", code=75,
                                 says="not a git repository"),
    "repo missing": row(*AUDIT, "--repo", "nope", code=75, says="no such directory"),
    "fixtures missing": row(*AUDIT, "--fixtures-from", "nope", code=75,
                            says="could not read fixture corpus nope"),
    "fixture ids not UTF-8": row(*AUDIT, "--fixture-ids", "f", code=75,
                                 says="could not read fixture ids f", f=bytes(range(256))),
    "terraform state 100,000 deep": row(*AUDIT, "--terraform-state", "t", code=75,
                                        says="nested too deeply", t=DEEP_OBJECT),
    "terraform state of the wrong shape": row(*AUDIT, "--terraform-state", "t", code=75,
                                              says="resources is not a list",
                                              t=b'{"version": 4, "resources": 5}'),
    "terraform state version text": row(*AUDIT, "--terraform-state", "t", code=75,
                                        says="state format version '4'",
                                        t=b'{"version": "4", "resources": []}'),
    "owned ids 5,000 deep": row(*AUDIT, "--owned-ids", "o", code=75, says="nested too deeply",
                                o=b"[" * 5000 + b"]" * 5000),
    "owned-ids command missing": row(*AUDIT, "--owned-ids-command", "/nonexistent/x", code=75,
                                     says="cannot run"),
    # -- cloudguard.toml -----------------------------------------------------------------
    "config a directory": row(*AUDIT, "--config", ".", code=97,
                              says="a directory, not a file: name the file"),
    "config missing": row(*AUDIT, "--config", "nope.toml", code=97,
                          says="nope.toml: does not exist"),
    "config with a byte-order mark": row(*AUDIT, "--config", "c.toml", code=1,
                                         says="unverified",
                                         c__toml=b'\xef\xbb\xbf[audit]\ngrace = "1h"\n'),
    "config not TOML": row(*AUDIT, "--config", "c.toml", code=97, says="invalid TOML",
                           c__toml=b"[audit\n"),
    "config audit not a table": row(*AUDIT, "--config", "c.toml", code=97,
                                    says="line 1: audit: must be a table",
                                    c__toml=b'audit = "x"\n'),
    "config unknown key": row(*AUDIT, "--config", "c.toml", code=97,
                              says="did you mean 'inventory'?",
                              c__toml=b"[audit]\ninvetory = []\n"),
    "config grace a number": row(*AUDIT, "--config", "c.toml", code=97,
                                 says="audit.grace: a bare number is not a duration",
                                 c__toml=b"[audit]\ngrace = 5\n"),
    "config grace 20 digits": row(*AUDIT, "--config", "c.toml", code=97,
                                  says="audit.grace: too long",
                                  c__toml=b'[audit]\ngrace = "99999999999999999999d"\n'),
    "config task-tag empty": row(*AUDIT, "--config", "c.toml", code=97,
                                 says="audit.task-tag: expected a tag name",
                                 c__toml=b'[audit]\ntask-tag = ""\n'),
    "config inventory a number": row("audit", "--config", "c.toml", code=97,
                                     says="audit.inventory: expected a list",
                                     c__toml=b"[audit]\ninventory = 5\n"),
    "config not UTF-8": row(*AUDIT, "--config", "c.toml", code=97, says="not UTF-8 text",
                            c__toml=bytes(range(256))),
    "config in UTF-16": row(*AUDIT, "--config", "c.toml", code=97, says="not UTF-8 text",
                            c__toml='[audit]\ngrace = "1h"\n'.encode("utf-16")),
    "config 100,000 arrays deep": row(*AUDIT, "--config", "c.toml", code=97,
                                      says="invalid TOML: nested too deeply",
                                      c__toml=b"a = " + b"[" * 100_000 + b"]" * 100_000),
    "config 5,000 tables deep": row(*AUDIT, "--config", "c.toml", code=97,
                                    says="nested too deeply",
                                    c__toml=b"a = " + b"{b=" * 5000 + b"1" + b"}" * 5000),
    # -- reap plan: reports that are not ---------------------------------------------------
    "plan from a missing report": row("reap", "plan", "nope.json", code=2,
                                      says="audit report nope.json does not exist"),
    "plan from a directory": row("reap", "plan", ".", code=2,
                                 says="audit report . is a directory, not a file"),
    "plan from an inventory list": row("reap", "plan", "az.json", code=97,
                                       says="not a cloudguard.audit report: a JSON list of "
                                       "1 entry (an inventory export?)"),
    "plan from 100,000 deep": row("reap", "plan", "d.json", code=97, says="nested too deeply",
                                  d__json=DEEP),
    "plan from a string": row("reap", "plan", "d.json", code=97,
                              says="text, not a JSON object", d__json=b'"x"'),
    "plan from binary": row("reap", "plan", "d.json", code=97, says="cannot read audit report",
                            d__json=bytes(range(256))),
    "plan from an empty file": row("reap", "plan", "d.json", code=97, says="not valid JSON",
                                   d__json=b""),
    "plan of an unknown verdict": row("reap", "plan", "d.json", "--verdict", "foo", code=2,
                                      says="unknown verdict 'foo'", d__json=b"{}"),
    "plan of ok VMs": row("reap", "plan", "d.json", "--verdict", "ok", code=2,
                          says="verdict 'ok' is never reapable", d__json=b"{}"),
    "plan of an unknown action": row("reap", "plan", "d.json", "--action", "foo", code=2,
                                     says="unknown action 'foo'", d__json=b"{}"),
    "plan with dependents, deallocating": row("reap", "plan", "d.json", "--with-dependents",
                                              code=2, says="use --action delete",
                                              d__json=b"{}"),
    "plan of nothing": row("reap", "plan", code=2, says="give the audit report to plan from"),
    # -- reap apply: plans that are not ----------------------------------------------------
    "apply a missing plan": row("reap", "apply", "nope.json", code=2,
                                says="plan nope.json does not exist"),
    "apply a directory": row("reap", "apply", ".", code=2,
                             says="plan . is a directory, not a file"),
    "apply an inventory": row("reap", "apply", "az.json", code=97,
                              says="not a cloudguard.reap.plan plan: a JSON list"),
    "apply 100,000 deep": row("reap", "apply", "d.json", code=97, says="nested too deeply",
                              d__json=DEEP),
    "apply binary": row("reap", "apply", "d.json", code=97, says="plan is not valid JSON",
                        d__json=bytes(range(256))),
    "apply an empty object": row("reap", "apply", "d.json", code=97,
                                 says='a JSON document with no "schema" field', d__json=b"{}"),
    # -- the history, acknowledgements and trust ------------------------------------------
    "fail-on new without the history": row(*AUDIT, "--fail-on", "new", "--no-history", code=2,
                                           says="--fail-on new needs the history"),
    "acks missing": row(*AUDIT, "--acks", "nope.toml", code=97,
                        says="invalid acknowledgements: nope.toml: cannot be read"),
    "acks a directory": row(*AUDIT, "--acks", ".", code=97, says="not a regular file"),
    "acks not TOML": row(*AUDIT, "--acks", "a.toml", code=97, says="a.toml: invalid TOML",
                         a__toml=b"[ack\n"),
    "acks without an owner": row(*AUDIT, "--acks", "a.toml", code=97, says="missing 'owner'",
                                 a__toml=b'[[ack]]\nid = "x"\n'),
    "notify fatal not a boolean": row(*AUDIT, "--config", "c.toml", code=97,
                                      says="notify.fatal: expected true or false",
                                      c__toml=b'[notify]\nfatal = "yes"\n'),
    "webhook over http": row(*AUDIT, "--config", "c.toml", code=97,
                             says="the URL must be https://",
                             c__toml=b'[[notify.webhook]]\nkind = "slack"\n'
                             b'url = "http://example.com"\n'),
    "history format xml": row("history", "runs", "-f", "xml", code=2,
                              says="'xml' is not table or json"),
    "history limit zero": row("history", "runs", "-n", "0", code=2, says="--limit"),
    "history resource without id": row("history", "resource", code=2,
                                       says="give the resource's id"),
    "history config a directory": row("history", "runs", "--config", ".", code=97,
                                      says="a directory, not a file: name the file"),
    "history config missing": row("history", "runs", "--config", "nope.toml", code=97,
                                  says="nope.toml: does not exist"),
    "history store damaged": row("history", "runs", "--config", "c.toml", code=75,
                                 says="damaged or not a database",
                                 c__toml=b'[history]\npath = "h.db"\n', h__db=b"garbage\n"),
    "history store a directory": row("history", "runs", "--config", "c.toml", code=75,
                                     says="is not a regular file",
                                     c__toml=b'[history]\npath = "."\n'),
    "history busy-timeout 20 digits": row("history", "runs", "--config", "c.toml", code=97,
                                          says="history.busy-timeout: too long",
                                          c__toml=b'[history]\nbusy-timeout = '
                                          b'"99999999999999999999d"\n'),
    "history url not PostgreSQL": row("history", "runs", "--config", "c.toml", code=97,
                                      says="expected a postgresql://",
                                      c__toml=b'[history]\nurl = "http://x"\n'),
    "history url-env not a name": row("history", "runs", "--config", "c.toml", code=97,
                                      says="not an environment variable name",
                                      c__toml=b'[history]\nurl-env = "1BAD"\n'),
    "history url-env unset": row("history", "runs", "--config", "c.toml", code=75,
                                 says="is not set ([history] url-env names it)",
                                 c__toml=b'[history]\nurl-env = "CLOUDGUARD_UNSET_URL"\n'),
    "ack without id": row("ack", code=2, says="give the resource's id"),
    "ack until not a date": row("ack", "x", "--reason", "r", "--until", "soon", code=2,
                                says="not a date (YYYY-MM-DD)"),
    "ack until February 30": row("ack", "x", "--reason", "r", "--until", "2030-02-30", code=2,
                                 says="not a date"),
    "ack until past": row("ack", "x", "--reason", "r", "--until", "2020-01-01", code=2,
                          says="already past"),
    "ack until years ahead": row("ack", "x", "--reason", "r", "--until", "9999-12-31", code=2,
                                 says="more than a year ahead"),
    "ack reason empty": row("ack", "x", "--reason", "", "--until", "2020-01-01", code=2,
                            says="reason: must not be empty"),
    "trust a directory": row("trust", ".", code=2, says="is a directory, not a file"),
    "trust a file of another name": row("trust", "x.toml", code=2,
                                        says="only a discovered cloudguard.toml needs trust"),
    "trust in a missing directory": row("trust", "sub/cloudguard.toml", code=97,
                                        says="its directory cannot be opened"),
    "trust nothing, outside a repository": row(
        "trust", code=2, says="(not inside a git repository, so no parent is searched)"),
    # -- init ----------------------------------------------------------------------------
    "init provider variable PATH": row("init", "--no-input", "--provider-variable", "PATH",
                                       code=2, says="provider variable 'PATH' cannot be bound"),
    "init empty task tag": row("init", "--no-input", "--task-tag", " ", code=2,
                               says="expected a tag name"),
    "init empty path": row("init", "--no-input", "--owned-ids", "", code=2,
                           says="--owned-ids: an empty path"),
    "init over a file": row("init", "--no-input", code=2, says="cloudguard.toml exists",
                            cloudguard__toml=b"# mine\n"),
    "init task tag empty": row("init", "--no-input", "--task-tag", "", code=2,
                               says="expected a tag name, got ''"),
    # -- issue 36 ------------------------------------------------------------------------
    "report twice to one file": row(*AUDIT, "--report", "json=a", "--report", "html=a",
                                    code=2, says="writes to the same file as --report json=a"),
    "output and report to one file": row(*AUDIT, "-o", "a", "--report", "json=./a", code=2,
                                         says="one report per file"),
    "require-generation unknown kind": row(*AUDIT, "--require-generation", "vms", code=2,
                                           says="unknown kind 'vms'"),
    "inventory a device": row("audit", "-i", "/dev/zero", code=2,
                              says="/dev/zero is not a regular file"),
    "history url malformed": row("history", "runs", "--config", "c.toml", code=97,
                                 says="history.url: not a valid URL",
                                 c__toml=b'[history]\nurl = "postgresql://[bad"\n'),
    "history url malformed, audit without history": row(
        *AUDIT, "--no-history", "--config", "c.toml", code=97,
        says="history.url: not a valid URL", c__toml=b'[history]\nurl = "postgresql://[bad"\n'),
    "history limit 20 digits": row("history", "runs", "--limit", "99999999999999999999",
                                   code=2, says="--limit"),
    "history resource not found": row("history", "resource", "vm-leak-01", "--config",
                                      "c.toml", code=1, says="no resource vm-leak-01 in the",
                                      c__toml=b'[history]\npath = "h.db"\n'),
    "check a line 200,000 deep": row("check", "--log", "r.jsonl", code=97,
                                     says="line 2 is not a JSON record",
                                     r__jsonl=b'{"schema":1,"kind":"armed"}\n'
                                     + b"[" * 200_000 + b"]" * 200_000 + b"\n"),
    "webhook to the metadata service": row(
        *AUDIT, "--config", "c.toml", code=97, says="link-local or a cloud's metadata service",
        c__toml=b'[[notify.webhook]]\nkind = "slack"\nname = "x"\n'
        b'url = "https://169.254.169.254/latest/meta-data"\n'),
    "webhook to a link-local IPv6": row(
        *AUDIT, "--config", "c.toml", code=97, says="is link-local",
        c__toml=b'[[notify.webhook]]\nkind = "teams"\nname = "x"\nurl = "https://[fe80::1]/"\n'),
}  # fmt: skip


@pytest.mark.parametrize("name", ROWS)
def test_an_odd_input_gets_one_line_and_its_exit_code(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = ROWS[name]
    monkeypatch.chdir(tmp_path)  # outside any repository: no project file applies
    for file, data in case.files.items():
        (tmp_path / file).write_bytes(data)
    done = cloudguard(*case.argv)
    raised = done.exception if not isinstance(done.exception, SystemExit) else None
    assert raised is None, broken("no-traceback", f"{name}: a traceback: {raised!r}")
    assert "Traceback" not in done.output, broken("no-traceback", f"{name}: {done.output}")
    assert done.exit_code == case.code, broken(
        "its-exit-code", f"{name}: exit {done.exit_code}, not {case.code}\n{done.stderr}"
    )
    lines = done.stderr.splitlines()
    assert any(case.says in line for line in lines), f"{name}: {case.says!r} not in\n{lines}"


def test_there_are_more_than_a_hundred_rows() -> None:
    assert len(ROWS) > 100


def _slow_reader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`cloudguard ARGS | head -c 1`: the reader takes one byte and leaves."""
    reader = subprocess.Popen(
        [CLOUDGUARD, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.read(1)
    reader.stdout.close()
    stderr = reader.stderr.read().decode()
    return subprocess.CompletedProcess(reader.args, reader.wait(timeout=120), "", stderr)


@pytest.mark.parametrize(("allow", "code"), [(True, 0), (False, 1)])
def test_a_reader_that_leaves_is_not_an_error(tmp_path: Path, allow: bool, code: int) -> None:
    # Large enough that the audit is still writing when the reader has gone.
    fleet = [azure_vm(f"vm-{n}", tags={"task-id": f"t-{n}"}) for n in range(3000)]
    (tmp_path / "vms.json").write_text(json.dumps(fleet))
    args = ["audit", "-i", "vms.json", "-f", "json", *(["--allow-unverified"] if allow else [])]
    done = _slow_reader(*args, cwd=tmp_path)
    # The audit's own code (1 only for findings), whatever became of its output.
    assert done.returncode == code, broken(
        "the-audits-own-code", f"exit {done.returncode}, not the audit's own {code}"
    )
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr
    assert "Exception ignored" not in done.stderr


def _help(*command: str) -> str:
    env = dict(os.environ, COLUMNS="80")
    return subprocess.run(
        [CLOUDGUARD, *command, "-h"], env=env, capture_output=True, text=True, timeout=60
    ).stdout


def test_help_at_80_columns_keeps_option_names_whole() -> None:
    shown = _help("audit")
    for flag in ("--all-subscriptions", "--listed-subscriptions", "--management-endpoint",
                 "--owned-ids-command", "--allow-unverified", "--generation-tag"):  # fmt: skip
        assert f" {flag} " in shown, f"{flag} is cut at 80 columns"
    assert "…" not in shown
    assert max(len(line) for line in shown.splitlines()) <= 80


@pytest.mark.parametrize("command", [("audit",), ("reap", "apply")])
def test_help_at_80_columns_reads_as_a_table(command: tuple[str, ...]) -> None:
    """No metavar so long that a panel's help is squeezed into a few characters a line
    (issue 36: `audit --help` was 401 lines, the Live providers' help 7 characters wide)."""
    shown = _help(*command)
    lines = len(shown.splitlines())
    assert lines <= 260, broken("help-reads-as-a-table", f"{' '.join(command)} -h: {lines} lines")
    if command == ("audit",):  # the live panel's help column holds a phrase a line
        provider = next(line for line in shown.splitlines() if line.startswith("│ --provider"))
        assert "Sweep live with an installed" in provider, provider


@pytest.mark.parametrize(
    ("command", "literal"),
    [
        (("reap", "apply"), "[reap] max-age"),
        (("history", "runs"), "Config file whose [history] table"),
        (("audit",), "the history store ([history])"),
    ],
    ids=["reap apply", "history runs", "audit"],
)
def test_help_keeps_brackets_literal(command: tuple[str, ...], literal: str) -> None:
    shown = " ".join(_help(*command).replace("│", " ").split())
    assert literal in shown, broken(
        "brackets-kept-literal", f"a literal {literal!r} was swallowed as markup: {shown}"
    )


def test_a_fifo_as_an_inventory_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "inventory.fifo"
    os.mkfifo(fifo)
    # No writer ever opens it: an audit that opened it to read would wait for ever.
    done = subprocess.run(
        [CLOUDGUARD, "audit", "-i", str(fifo), "--no-history"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, broken("its-exit-code", done.stderr)
    assert "is not a regular file (a FIFO or a device)" in done.stderr
    assert "Traceback" not in done.stderr
