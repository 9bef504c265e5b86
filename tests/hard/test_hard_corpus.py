"""The corpus: distinct ways a suite reaches a cloud, each under `cloudguard run --hard`.

Every technique must be recorded (with what it reached) and turn the run red,
whether or not it goes through Python, PATH, the environment or the C library.
The ones marked "sink" escape the soft seal entirely: only the hard seal's
sink sees them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hard_helpers import LOOKUP_UNANSWERED, connect, hard_env, hard_run, python_child
from host_lacks import require
from named_checks import broken

RESOLV = "/etc/resolv.conf"
FAKE_AZ = """#!/bin/sh
# A stand-in for the installed Azure CLI's launcher: Python with -I, by absolute path.
exec {python} -I -c "import socket; socket.create_connection(('management.azure.com', 443), 5)"
"""
# A gRPC call to Google that swallows its failure: grpcio's C-core resolves and connects itself.
GRPC_CALL = (
    "import grpc\n"
    "channel = grpc.insecure_channel('pubsub.googleapis.com:443')\n"
    "try:\n"
    "    channel.unary_unary('/google.pubsub.v1.Publisher/ListTopics')(b'', timeout=5)\n"
    "except Exception as e:\n"
    "    print('refused', type(e).__name__)\n"
)
# Without site, a suite finds grpc itself.
PURELIB = sysconfig.get_paths()["purelib"]
GRPC_CALL_NO_SITE = f"import sys; sys.path.append({PURELIB!r})\n{GRPC_CALL}"
STATIC_CONNECT_C = r"""
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
int main(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(443);
    inet_pton(AF_INET, "20.190.128.1", &a.sin_addr);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) perror("connect");
    return 0;
}
"""


def fake_az(tmp_path: Path) -> list[str]:
    script = tmp_path / "opt-az" / "bin" / "az"
    script.parent.mkdir(parents=True)
    script.write_text(FAKE_AZ.format(python=sys.executable))
    script.chmod(0o755)
    return [str(script), "account", "get-access-token"]


def static_program(tmp_path: Path) -> list[str]:
    compiler = shutil.which("cc")
    require("static-c", None if compiler else "no C compiler (cc): dev.py test installs gcc")
    assert compiler is not None
    source = tmp_path / "connect.c"
    source.write_text(STATIC_CONNECT_C)
    binary = tmp_path / "static-connect"
    built = subprocess.run(
        [compiler, "-static", "-o", str(binary), str(source)], capture_output=True, check=False
    )
    failed = built.returncode != 0
    require(
        "static-c", f"cc -static cannot link: {built.stderr.decode()[-200:]}" if failed else None
    )
    return [str(binary)]


Technique = Callable[[Path], list[str]]
STARTED = "the-technique-started"
# (id, command, via, target): each must be recorded with that via and target, and the run red.
CORPUS: list[tuple[str, Technique, str, str]] = [
    ("az-on-path", lambda _: ["az", "vm", "list"], "az-shim", "az vm list"),
    ("aws-on-path", lambda _: ["aws", "s3", "ls"], "aws-shim", "aws s3 ls"),
    ("az-by-absolute-path", fake_az, "hard-tcp", "management.azure.com:443"),
    (
        "curl",
        lambda _: ["curl", "-sS", "-m", "5", "https://login.microsoftonline.com/"],
        "hard-tcp",
        "login.microsoftonline.com:443",
    ),
    (
        "bash-dev-tcp",
        lambda _: ["bash", "-c", "exec 3<>/dev/tcp/s3.amazonaws.com/443; exit 0"],
        "hard-tcp",
        "s3.amazonaws.com:443",
    ),
    ("getent-lookup", lambda _: ["getent", "hosts", "sts.amazonaws.com"], "hard-dns",
     "sts.amazonaws.com"),
    (
        "python-isolated-imds",
        lambda _: python_child("-I", code=connect("169.254.169.254", 80)),
        "hard-tcp",
        "169.254.169.254:80",
    ),
    (
        "python-no-site",
        lambda _: python_child("-S", code=connect("management.azure.com", 443)),
        "hard-tcp",
        "management.azure.com:443",
    ),
    (
        "python-scrubbed-environment",
        lambda _: ["env", "-i", *python_child(code=connect("ec2.us-east-1.amazonaws.com", 443))],
        "hard-tcp",
        "ec2.us-east-1.amazonaws.com:443",
    ),
    (
        "raw-ipv6-literal",
        lambda _: python_child("-I", code=connect("2603:1030::1", 443, family="6")),
        "hard-tcp",
        "[2603:1030::1]:443",
    ),
    (
        "udp-datagram",
        lambda _: python_child(
            "-I",
            code="import socket\n"
            "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('203.0.113.9', 4789))",
        ),
        "hard-udp",
        "203.0.113.9:4789",
    ),
    ("static-c-program", static_program, "hard-tcp", "20.190.128.1:443"),
    # The pytest plugin alone sees neither (no sitecustomize): tests/pytest_plugin/
    # test_plugin_google_forms.py. The C-core's own resolver asks the seal's.
    ("grpc-python-isolated", lambda _: python_child("-I", code=GRPC_CALL), "hard-dns",
     "pubsub.googleapis.com"),
    ("grpc-python-no-site", lambda _: python_child("-S", code=GRPC_CALL_NO_SITE), "hard-dns",
     "pubsub.googleapis.com"),
]  # fmt: skip


@pytest.mark.parametrize(("technique", "via", "target"), [c[1:] for c in CORPUS],
                         ids=[c[0] for c in CORPUS])  # fmt: skip
def test_every_technique_is_recorded_and_red_under_the_hard_seal(
    tmp_path: Path, technique: Technique, via: str, target: str
) -> None:
    # The command says it started first: a seal that never ran it fails here, not below.
    started = ["sh", "-c", 'echo "$0" >&2; exec "$@"', STARTED, *technique(tmp_path)]
    run = hard_run(tmp_path, *started)

    assert STARTED in run.stderr, broken("the-command-ran", f"it did not:\n{run.output}")
    recorded = run.targets(via)
    assert target in recorded, broken(
        "the-reach-is-recorded", f"{via} {target} was not recorded (got {recorded}):\n{run.output}"
    )
    assert run.returncode == 98, broken("the-run-is-red", f"the run did not go red:\n{run.output}")


def test_a_connection_is_attributed_to_the_name_it_was_resolved_from(tmp_path: Path) -> None:
    run = hard_run(tmp_path, *python_child("-I", code=connect("vault.azure.net", 443)))

    # The run's own lookup, before the command, must get the sink's address too, or it stops.
    assert LOOKUP_UNANSWERED not in run.stderr, broken(
        "lookups-are-answered-with-an-address",
        f"the run stopped: a lookup made inside got no address from the sink:\n{run.output}",
    )
    (lookup, *_) = [r for r in run.reaches() if r["via"] == "hard-dns"] or [None]
    tcp = [r for r in run.reaches() if r["via"] == "hard-tcp"]
    assert lookup is not None and lookup["name"] == "vault.azure.net", run.output
    assert tcp, broken(
        "the-answer-leads-to-the-sink",
        f"no connection reached the sink: the DNS answer gave it nowhere to go\n{run.output}",
    )
    assert {r["name"] for r in tcp} == {"vault.azure.net"}, (
        f"the connection was not attributed to vault.azure.net: {tcp}"
    )
    assert all(r["address"].startswith(("198.18.", "198.19.", "2001:2:")) for r in tcp)


def test_a_record_names_the_program_and_the_test_that_was_running(tmp_path: Path) -> None:
    env = hard_env(tmp_path, CLOUDGUARD_TEST="tests/test_x.py::test_swallows_the_error")
    # The shell says its pid and its parent's (as the command sees them), then becomes curl.
    script = 'echo "ids $$ $PPID" >&2; exec curl -sS -m 5 http://198.51.100.7:8080/'
    run = hard_run(tmp_path, "sh", "-c", script, env=env)

    record = _names_its_sender(run)
    assert record["test"] == "tests/test_x.py::test_swallows_the_error", run.output
    assert record["argv"][:1] == ["curl"] and record["protocol"] == "tcp", record
    assert record["port"] == 8080 and record["address"] == "198.51.100.7"


def test_a_blocking_connect_is_named_by_the_gate_that_made_it(tmp_path: Path) -> None:
    """A caller that waits for its connection is named to the sink by the gate making it (by
    its socket), not found by a search of every process's descriptors: still the sender."""
    env = hard_env(tmp_path, CLOUDGUARD_TEST="tests/test_x.py::test_waits_for_its_connection")
    code = (
        "import errno, fcntl, os, socket, sys\n"
        "print('ids', os.getpid(), os.getppid(), file=sys.stderr, flush=True)\n"
        "s = socket.socket()\n"
        "assert s.getblocking()\n"
        "try:\n"
        "    s.connect(('198.51.100.9', 8443))\n"
        "except OSError as error:\n"
        "    print('refused', errno.errorcode[error.errno], file=sys.stderr)\n"
        "flags = fcntl.fcntl(s.fileno(), fcntl.F_GETFL)\n"
        "print('blocking' if not flags & os.O_NONBLOCK else 'non-blocking', file=sys.stderr)\n"
    )
    run = hard_run(tmp_path, *python_child("-I", code=code), env=env)

    record = _names_its_sender(run)
    assert record["test"] == "tests/test_x.py::test_waits_for_its_connection", run.output
    assert record["port"] == 8443 and record["address"] == "198.51.100.9", record
    # The gate made the connection without blocking; the caller waited, as it asked, and its
    # socket blocks as it did.
    assert "refused ECONNREFUSED\nblocking\n" in run.stderr, broken(
        "the-caller-waits-on-its-own-blocking-socket", run.output
    )


EXECS_ITSELF = (
    "import os, socket, sys\n"
    "port = int(sys.argv[1])\n"
    "print('pid', os.getpid(), port, file=sys.stderr, flush=True)\n"
    "try:\n"
    "    socket.create_connection(('198.51.100.21', port), timeout=5)\n"
    "except OSError as error:\n"
    "    print('refused', error, file=sys.stderr)\n"
    "if port == 8001:  # the same process (pid, start time), another command line\n"
    "    option, value = '--to' + 'ken', 'hun' + 'ter2'  # in its argv, not in this source\n"
    "    os.execv(sys.executable, [*sys.orig_argv[:-1], '8002', option, value])\n"
)


def test_each_record_names_the_command_line_its_process_had_then(tmp_path: Path) -> None:
    """A process refused, then exec'd with another command line (the same pid and start time)
    and refused again: each record names the argv of its own attempt, redacted, never one the
    sink remembered from before (its redactions are remembered by the argv itself)."""
    run = hard_run(tmp_path, *python_child("-I", code=EXECS_ITSELF), "8001", env=hard_env(tmp_path))

    records = sorted((r for r in run.reaches() if r["via"] == "hard-tcp"), key=lambda r: r["port"])
    assert [r["port"] for r in records] == [8001, 8002], run.output
    pids = {int(line.split()[1]) for line in run.stderr.splitlines() if line.startswith("pid ")}
    assert {r["pid"] for r in records} == pids and len(pids) == 1, (pids, records)
    tails = [r["argv"][-3:] for r in records]
    assert tails == [["-c", EXECS_ITSELF, "8001"], ["8002", "--token", "<redacted>"]], broken(
        "records-name-their-own-argv",
        f"the records name the command lines {tails}, not each attempt's own:\n{run.output}",
    )
    assert "hunter2" not in run.log.read_text(), run.output


def _names_its_sender(run: Any) -> dict[str, Any]:
    """The run's one hard-tcp record, which must name the pid and parent the sender printed
    ("ids PID PPID" on stderr, as the command sees them)."""
    (record,) = [r for r in run.reaches() if r["via"] == "hard-tcp"]
    pid, ppid = (int(n) for n in run.stderr.split("ids ", 1)[1].split()[:2])
    assert (record["pid"], record["ppid"]) == (pid, ppid), broken(
        "the-record-names-the-sender",
        f"the record names pid {record['pid']} (parent {record['ppid']}), the sender was "
        f"{pid} (parent {ppid}):\n{run.output}",
    )
    return dict(record)


def test_loopback_servers_inside_keep_working_and_the_run_stays_clean(tmp_path: Path) -> None:
    code = (
        "import socket, threading\n"
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "answer = lambda: server.accept()[0].sendall(b'pong')\n"
        "threading.Thread(target=answer, daemon=True).start()\n"
        "client = socket.create_connection(server.getsockname(), timeout=5)\n"
        "print(client.recv(4).decode())\n"
    )
    run = hard_run(tmp_path, *python_child("-I", code=code))

    assert run.returncode == 0, run.output
    assert run.stdout.strip() == "pong"
    assert run.reaches() == ()


def test_the_command_runs_as_the_invoking_user_and_cannot_unmount_or_reroute(
    tmp_path: Path,
) -> None:
    script = (
        "id -u; "
        "ip route replace default dev lo 2>/dev/null && echo REROUTED; "
        f"umount {RESOLV} 2>/dev/null && echo UNMOUNTED; exit 0"
    )
    run = hard_run(tmp_path, "sh", "-c", script)
    # The control: as root of its own namespaces the same script can do both.
    control = subprocess.run(
        [
            "unshare",
            "-rnm",
            "sh",
            "-c",
            f"ip link set lo up; mount --bind {os.devnull} {RESOLV}; {script}",
        ],
        env=hard_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert "REROUTED" in control.stdout and "UNMOUNTED" in control.stdout, control
    assert run.returncode == 0, run.output
    assert run.stdout.split()[0] == str(os.getuid()), run.output
    assert "REROUTED" not in run.stdout and "UNMOUNTED" not in run.stdout, run.output


INNER_SUITE = """
import subprocess


def test_calls_curl_and_swallows_the_failure():
    subprocess.run(["curl", "-sS", "-m", "5", "https://management.azure.com/"], check=False)


def test_connects_in_process_and_swallows_the_failure():
    import socket

    try:
        socket.create_connection(("198.51.100.7", 8080), timeout=5)  # not a cloud name: the
    except OSError:  # in-process guard lets it pass, so only the sink sees it
        pass


def test_stays_local():
    pass
"""


def test_under_pytest_a_record_names_the_test_that_was_running(tmp_path: Path) -> None:
    suite = tmp_path / "suite" / "test_inner.py"
    suite.parent.mkdir()
    suite.write_text(INNER_SUITE)

    run = hard_run(tmp_path, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-p", "no:randomly", str(suite))  # fmt: skip

    # The node id's directory part depends on where pytest puts its rootdir: compare from the file.
    tests = {
        str(r["target"]): str(r["test"]).rpartition("/")[2]
        for r in run.reaches()
        if r["via"] == "hard-tcp"
    }
    assert sorted(tests) == ["198.51.100.7:8080", "management.azure.com:443"], broken(
        "the-reaches-are-recorded", f"the reaches were not recorded: {tests}\n{run.output}"
    )
    assert tests == {
        "management.azure.com:443": "test_inner.py::test_calls_curl_and_swallows_the_failure",
        "198.51.100.7:8080": "test_inner.py::test_connects_in_process_and_swallows_the_failure",
    }, broken(
        "records-name-the-running-test",
        f"the records do not name the running tests: {tests}\n{run.output}",
    )
    assert run.returncode == 98, run.output


XDIST_SUITE = """
import socket

import pytest


@pytest.mark.parametrize("n", range(4))
def test_connects_in_process(n):
    try:
        socket.create_connection(("198.51.100.%d" % (10 + n), 8080), timeout=5)
    except OSError:
        pass
"""


def test_under_xdist_each_record_names_its_own_workers_test(tmp_path: Path) -> None:
    suite = tmp_path / "suite" / "test_workers.py"
    suite.parent.mkdir()
    suite.write_text(XDIST_SUITE)

    run = hard_run(tmp_path, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-p", "no:randomly", "-n", "2", str(suite))  # fmt: skip

    records = [r for r in run.reaches() if r["via"] == "hard-tcp"]
    named = {str(r["address"]): str(r["test"]).rpartition("::")[2] for r in records}
    assert sorted(named) == [f"198.51.100.{10 + n}" for n in range(4)], broken(
        "the-reaches-are-recorded", f"the reaches were not recorded: {named}\n{run.output}"
    )
    assert named == {f"198.51.100.{10 + n}": f"test_connects_in_process[{n}]" for n in range(4)}, (
        broken("records-name-the-running-test", f"a record does not name its own test: {named}")
    )
    assert run.returncode == 98, run.output
