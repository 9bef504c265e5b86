"""Owned-id evidence: Terraform state, an owned-ids command, a file of owned ids.

Each source is read from fixtures in the shapes their writers produce
(tests/audit/terraform/ holds a state file and the `terraform show -json`
output of the same infrastructure), and every bad input is an `EvidenceError`
naming the source: the audit did not run (75), never "owns nothing".
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from pathlib import Path

import pytest
from audit_helpers import SUBSCRIPTION
from named_checks import broken
from waiting import wait_until

from cloudguard.audit.evidence.interface import Evidence, EvidenceError, cloud_id_key
from cloudguard.audit.evidence.owned_ids_file import read_owned_ids_file
from cloudguard.audit.evidence.owned_ids_program import run_owned_ids_command
from cloudguard.audit.evidence.terraform_state import read_terraform_state

TERRAFORM = Path(__file__).parent / "terraform"
STATE_FILE = TERRAFORM / "fleet.tfstate"
SHOW_JSON = TERRAFORM / "fleet-show.json"
SECRET = "Tf-St4te-S3cret-do-not-print"

ARM = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/pilot"
OWNED_BY_THE_FIXTURES = {
    cloud_id_key(f"{ARM}/providers/Microsoft.Compute/virtualMachines/vm-tf-wkr-01"),
    cloud_id_key(f"{ARM}/providers/Microsoft.Compute/virtualMachines/vm-tf-wkr-02"),
    cloud_id_key(f"{ARM}/providers/Microsoft.Compute/disks/vm-tf-scratch"),
    cloud_id_key(ARM),
    "i-0aaa1111bbbb2222c",
    "vol-0ddd3333eeee4444f",
}


def python(code: str) -> tuple[str, ...]:
    """A command that runs `code` with this interpreter (argv, no shell)."""
    return (sys.executable, "-c", code)


# --- the comparison rule --------------------------------------------------------


def test_arm_ids_compare_case_insensitively_and_other_ids_exactly():
    upper = f"{ARM.upper()}/providers/Microsoft.Compute/virtualMachines/vm-1"
    evidence = Evidence(owned_ids=(("owned-ids-file", frozenset({cloud_id_key(upper.lower())})),))
    assert evidence.owner_of(upper) == "owned-ids-file"
    assert cloud_id_key("i-0ABC") != cloud_id_key("i-0abc")
    assert Evidence().owner_of(upper) is None


# --- Terraform state ------------------------------------------------------------


def test_a_state_file_owns_the_ids_of_its_managed_resources_only():
    owned = read_terraform_state(STATE_FILE)
    # The data source reads the jumpbox; Terraform does not own it.
    assert not any(i.endswith("/jumpbox") for i in owned), broken(
        "a-data-source-is-not-owned", "a data source's id was taken as owned"
    )
    assert owned == OWNED_BY_THE_FIXTURES


def test_show_json_owns_the_same_ids_through_modules_of_only_child_modules():
    assert read_terraform_state(SHOW_JSON) == OWNED_BY_THE_FIXTURES


def test_nothing_but_ids_is_taken_from_state():
    # Control: the secret is in both inputs; nothing read from them carries it.
    assert SECRET in STATE_FILE.read_text() and SECRET in SHOW_JSON.read_text()
    for path in (STATE_FILE, SHOW_JSON):
        assert not any(SECRET in cloud_id for cloud_id in read_terraform_state(path))


@pytest.mark.parametrize(
    "document",
    [{"format_version": "1.0"}, {"version": 4, "terraform_version": "1.9.8", "resources": []}],
    ids=["show-json-of-empty-state", "empty-state-file"],
)
def test_an_empty_state_owns_nothing(tmp_path, document):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(document))
    assert read_terraform_state(path) == frozenset()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("terraform {\n}\n", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"resources": []}', "neither a state file"),
        ('{"version": 3, "modules": []}', r"state format version 3 \(only 4 is read\)"),
        ('{"version": 4, "resources": {}}', "resources is not a list"),
        ('{"version": 4, "resources": ["x"]}', r"resources\[0\] is not an object"),
        (
            '{"version": 4, "resources": [{"mode": "managed", "instances": [{"id": "x"}]}]}',
            r"resources\[0\]\.instances\[0\] has no attributes object",
        ),
        ('{"format_version": "1.0", "values": {}}', "values.root_module is not an object"),
        (
            '{"format_version": "1.0", "values": {"root_module": {"child_modules": [1]}}}',
            r"child_modules\[0\] is not an object",
        ),
        (
            '{"format_version": "1.0", "values": {"root_module": {"resources": [{"mode": 1}]}}}',
            r"resources\[0\] has no values object",
        ),
    ],
    ids=[
        "missing",
        "hcl",
        "a-list",
        "no-version-key",
        "version-3",
        "resources-not-a-list",
        "resource-not-an-object",
        "instance-without-attributes",
        "no-root-module",
        "child-module-not-an-object",
        "resource-without-values",
    ],
)
def test_a_state_that_cannot_be_read_is_an_evidence_error(tmp_path, content, message):
    path = tmp_path / "state.tfstate"
    if content is not None:
        path.write_text(content)
    with pytest.raises(EvidenceError, match=message) as raised:
        read_terraform_state(path)
    assert raised.value.source == f"terraform state {path}"


# --- a file of owned ids --------------------------------------------------------


def test_an_owned_ids_file_is_one_id_a_line_with_comments_and_blank_lines(tmp_path):
    path = tmp_path / "owned.txt"
    path.write_text(f"# the runners the scheduler owns\n\ni-0aaa\n  {ARM.upper()}  \n# i-0bbb\n")
    assert read_owned_ids_file(path) == {"i-0aaa", cloud_id_key(ARM)}


def test_an_owned_ids_file_may_be_a_json_list(tmp_path):
    path = tmp_path / "owned.json"
    path.write_text(json.dumps(["i-0aaa", ARM]))
    assert read_owned_ids_file(path) == {"i-0aaa", cloud_id_key(ARM)}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ('["i-0aaa", ', "not a JSON list"),
        ('["i-0aaa", 42]', "item 1 is not a non-empty string"),
        ('["i-0aaa", ""]', "item 1 is not a non-empty string"),
        (b"i-0aaa\n\xff\xfe\n", "cannot read"),
    ],
    ids=["missing", "broken-json", "a-number", "an-empty-string", "not-utf8"],
)
def test_an_owned_ids_file_that_cannot_be_read_is_an_evidence_error(tmp_path, content, message):
    path = tmp_path / "owned.txt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(EvidenceError, match=message) as raised:
        read_owned_ids_file(path)
    assert raised.value.source == f"owned ids {path}"


# --- an owned-ids command -------------------------------------------------------


def test_a_command_prints_objects_or_bare_strings_one_a_line():
    argv = python(
        "import json\n"
        "print(json.dumps({'id': 'i-0aaa', 'state': 'running'}))\n"
        "print()\n"
        f"print(json.dumps({ARM.upper()!r}))\n"
    )
    assert run_owned_ids_command(argv) == {"i-0aaa", cloud_id_key(ARM)}


def test_a_command_gets_its_arguments_literally_never_through_a_shell(tmp_path):
    marker = tmp_path / "pwned"
    echo_args = python("import json, sys\nfor a in sys.argv[1:]: print(json.dumps(a))")
    argv = (*echo_args, f"$(touch {marker})", "i-0aaa; rm -rf ~")
    # Control: the arguments arrive, as written.
    assert run_owned_ids_command(argv) == {f"$(touch {marker})", "i-0aaa; rm -rf ~"}
    assert not marker.exists()


def test_a_command_that_prints_nothing_owns_nothing():
    assert run_owned_ids_command(python("pass")) == frozenset()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "import sys\nprint('\"i-0aaa\"')\n"
            "sys.stderr.write('warming up\\ncontroller API: 503\\n')\nsys.exit(1)",
            "exited with status 1: controller API: 503",
        ),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", "exited on signal 15"),
        ("print('\"i-0aaa\"')\nprint('i-0bbb')", "output line 2 is not JSON"),
        ('print(\'{"name": "vm-1"}\')', r'output line 1 is neither \{"id": "..."\} nor'),
        ("print(42)", "output line 1 is neither"),
        ("print('[\"i-0aaa\"]')", "output line 1 is neither"),
        ("import sys\nsys.stdout.buffer.write(b'\"i-0\\xff\"\\n')", "output is not UTF-8"),
    ],
    ids=["exits-1", "killed", "garbage", "no-id", "a-number", "a-list", "not-utf8"],
)
def test_a_command_that_fails_or_prints_garbage_is_an_evidence_error(code, message):
    with pytest.raises(EvidenceError, match=message) as raised:
        run_owned_ids_command(python(code))
    assert raised.value.source == f"owned-ids command {sys.executable}"


def test_a_command_that_cannot_be_started_is_an_evidence_error(tmp_path):
    with pytest.raises(EvidenceError, match="cannot run") as raised:
        run_owned_ids_command((str(tmp_path / "no-such-fleetctl"), "owned"))
    assert raised.value.source == f"owned-ids command {tmp_path / 'no-such-fleetctl'}"


def test_a_command_that_times_out_is_killed_with_its_children(tmp_path):
    """The leader and its child die together. The child watches its parent: once the leader
    is dead it writes a file, which it can do only if the timeout's kill missed it (a
    group's SIGKILL is queued to every member before the leader can finish exiting, and a
    process with SIGKILL queued runs no more of its own code). So the child's survival is
    seen as soon as the leader is gone, never by waiting out the child's sleep."""
    pids, survived = tmp_path / "pids", tmp_path / "survived"
    watcher = (
        "import os, sys, time\n"
        "leader = int(sys.argv[1])\n"
        "while os.getppid() == leader:\n"
        "    time.sleep(0.01)\n"
        f"open({str(survived)!r}, 'w').close()\n"
        "time.sleep(300)\n"
    )
    code = (
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {watcher!r}, str(os.getpid())])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "print('\"i-0aaa\"', flush=True)\n"
        "time.sleep(300)\n"
    )
    raised: list[BaseException] = []

    def call() -> None:
        try:
            run_owned_ids_command(python(code), timeout=1)
        except BaseException as error:  # judged below, in the test's own thread
            raised.append(error)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    leader, child = _written_pids(pids)
    leader_ended = wait_until(lambda: not _alive(leader))
    # Killed with its leader, the child dies (its SIGKILL is a moment from delivery); missed,
    # it says so the moment it sees its leader gone.
    child_settled = leader_ended and wait_until(lambda: survived.exists() or not _alive(child))
    for pid in (leader, child):  # whatever the code left alive ends here, so the call ends
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    caller.join(30)

    assert leader_ended, broken("the-leader-is-killed", f"{leader} outlived its timeout")
    assert not survived.exists(), broken(
        "the-whole-group-is-killed", f"the command's child {child} survived its leader's timeout"
    )
    assert child_settled, f"the command's child {child} neither died nor outlived its leader"
    assert [type(e) for e in raised] == [EvidenceError], raised
    assert re.search(r"timed out after 1 s \(killed\)", str(raised[0])), raised


def _written_pids(path: Path) -> tuple[int, int]:
    written = wait_until(lambda: path.exists() and len(path.read_text().split()) == 2)
    assert written, "the command never wrote its pids"
    leader, child = path.read_text().split()
    return int(leader), int(child)


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):  # gone, or reaped between open and read
        return False
    return fields[0] != "Z"  # a zombie is dead, waiting for its new parent to reap it
