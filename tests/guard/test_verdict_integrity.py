"""The code under test cannot silence the alarm: a run that reached is never green.

Each test is the judged command at the same uid, attacking the verdict after
(or while) it reached: rewriting, chmod'ing or deleting the log, flooding or
stopping the record keeper, limiting its descriptors, reading its memory,
leaving a process behind; under `--hard` also signalling the supervisor.
Every run is an ordinary user's (uid 65534 when the suite runs as root: a
permission means the same for everyone) inside a loopback-only network
namespace of the test's own (`unshare -rn`), so a broken guard fails the test
and sends nothing anywhere. The outcome may be 97 (tampering seen) or 98 (the
reach); never 0. Negative controls: test_negative_controls.py and
tests/hard/test_hard_negative_controls.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from named_checks import broken
from second_uid import guard_run_script, run_guard

from cloudguard.documents import reach_log

IP = shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin:/bin") or "ip"
PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
RECORDED_AZ = "az account show"
ALTERED = "tampering: the reach log was altered while the run was on"
COMMAND_RAN = "the-attacking-command-ran"


@pytest.fixture
def where(second_user: Path) -> Path:
    return second_user


def attacked_run(
    where: Path, script: str, *, hard: bool = False, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """`cloudguard run [--hard] --log LOG -- sh -c SCRIPT` as the second user, in its own
    loopback-only network namespace.

    The network namespace needs a user namespace whose root brings it up; the run itself
    then goes on in a further one as an ordinary user there (uid 1000, no capability), as
    it would on a host: the root of a user namespace may trace anything inside it.

    The command first says it ran: a run that never started the command (a seal that
    could not be made, 75) fails here, not at the check of what the command did.
    """
    script = f"echo {COMMAND_RAN} >&2; {script}"
    runner = guard_run_script(["sh", "-c", script], where / "reach.jsonl", hard=hard)
    as_user = ["unshare", "-U", "--map-user=1000", "--map-group=1000"]
    outer = (
        "import os, subprocess, sys\n"
        f"subprocess.run([{IP!r}, 'link', 'set', 'lo', 'up'], check=True)\n"
        f"command = {as_user!r} + [sys.executable, '-c', {runner!r}]\n"
        "sys.exit(subprocess.run(command).returncode)\n"
    )
    wrapper = (
        f"import os, sys; os.execvp('unshare', ['unshare', '-rn', sys.executable, '-c', {outer!r}])"
    )
    result = run_guard(where, wrapper, env={"PATH": PATH, "LANG": "C.UTF-8"}, timeout=timeout)
    assert COMMAND_RAN in result.stderr, broken("the-command-ran", f"it did not:\n{show(result)}")
    return result


def targets(where: Path) -> list[str]:
    return [str(r["target"]) for r in reach_log.read(str(where / "reach.jsonl")).reaches]


def show(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


# -- cloudguard run ------------------------------------------------------------------------

PAD_OVER_THE_LOG = (
    "python3 -c \"import os; log = os.environ['CLOUDGUARD_REACH_LOG']; "
    "data = open(log, 'rb').read(); header = data.split(b'\\\\n')[0] + b'\\\\n'; "
    "open(log, 'r+b').write(header + b' ' * (len(data) - len(header) - 1) + b'\\\\n')\""
)


def test_rewriting_the_log_in_place_after_a_reach_is_still_red(where: Path) -> None:
    # The log's own header padded with spaces to the log's exact length, same inode.
    result = attacked_run(where, f"az account show 2>/dev/null; {PAD_OVER_THE_LOG}")

    assert result.returncode == 98, broken(
        "a-rewritten-log-is-still-red", f"the reach was silenced:\n{show(result)}"
    )
    assert ALTERED in result.stderr, broken(
        "the-alteration-is-named", f"the alteration was not named:\n{show(result)}"
    )
    assert targets(where) == [RECORDED_AZ], "the keeper did not write its record back"


def test_a_log_its_writers_may_not_write_changes_nothing(where: Path) -> None:
    script = (
        'chmod 0400 "$CLOUDGUARD_REACH_LOG"; az account show 2>az.err; '
        'chmod 0600 "$CLOUDGUARD_REACH_LOG"; cat az.err >&2'
    )
    result = attacked_run(where, script)

    assert result.returncode == 98, f"the reach was silenced:\n{show(result)}"
    assert "NOT recorded" not in result.stderr, show(result)
    assert targets(where) == [RECORDED_AZ]


def test_stopping_the_keeper_during_a_reach_loses_no_record(where: Path) -> None:
    # The record waits in the keeper's socket while the keeper is stopped, even after the
    # refuser that sent it is killed: it is read when the keeper runs again.
    script = (
        "kill -STOP $PPID; az account show 2>/dev/null & sleep 1; kill -9 $!; "
        "kill -CONT $PPID; wait"
    )
    result = attacked_run(where, script)

    assert result.returncode == 98, f"the reach was silenced:\n{show(result)}"
    assert targets(where) == [RECORDED_AZ]


FLOOD = (
    "import os, resource, socket\n"
    "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))\n"
    "name = os.environ['CLOUDGUARD_KEEPER'].split()[0].rpartition('/')[2].removeprefix('@')\n"
    "held = []\n"
    "for _ in range(1100):\n"
    "    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
    "    s.connect(b'\\0' + name.encode())\n"
    "    held.append(s)\n"
    "import subprocess\n"
    "subprocess.run(['az', 'account', 'show'])\n"
)


def test_a_flood_of_connections_to_the_keeper_is_never_green(where: Path) -> None:
    (where / "flood.py").write_text(FLOOD)
    result = attacked_run(where, "python3 flood.py")

    assert result.returncode in (97, 98), f"the flood turned the run green:\n{show(result)}"
    assert "tampering: over 1024 connections held open to the keeper" in result.stderr, show(result)
    assert "tampering: a refuser could not deliver its record" in result.stderr, show(result)


def test_a_keeper_out_of_descriptors_is_never_green(where: Path) -> None:
    script = "prlimit --pid $PPID --nofile=4:4; (az account show 2>/dev/null &); sleep 1"
    result = attacked_run(where, script)

    assert result.returncode in (97, 98), f"the run was green:\n{show(result)}"
    assert "tampering: the record keeper ran out of descriptors" in result.stderr, show(result)


PEEK = (
    'for f in "/proc/$1/environ" "/proc/$1/fd/0" "/proc/$1/mem"; do '
    '  if head -c1 "$f" >/dev/null 2>&1; then echo "read $f"; fi; done; '
    'if (echo 1000 > "/proc/$1/oom_score_adj") 2>/dev/null; then echo "wrote oom_score_adj"; fi'
)


def test_the_keeper_cannot_be_read_or_adjusted_by_the_command(where: Path) -> None:
    (where / "peek.sh").write_text(PEEK)
    # The control first: the same user's own shell is readable, so "not read" means refused.
    result = attacked_run(where, "sh peek.sh $$ >&2; echo --- >&2; sh peek.sh $PPID >&2")

    own, _, keeper = result.stderr.partition("---")
    assert "read /proc/" in own and "wrote oom_score_adj" in own, show(result)
    assert "read /proc/" not in keeper and "wrote" not in keeper, show(result)
    assert result.returncode == 0, show(result)


def test_what_the_command_leaves_running_is_stopped_and_named(where: Path) -> None:
    script = "sh -c 'setsid sleep 300.25 >/dev/null 2>&1 &'; sleep 0.2"
    result = attacked_run(where, script)

    assert "process(es) the command left running" in result.stderr, show(result)
    assert "sleep 300.25" in result.stderr, show(result)
    left = subprocess.run(["pgrep", "-f", "sleep 300.25"], capture_output=True, text=True)
    assert left.stdout == "", f"still running after the run: {left.stdout}"


# -- a refusal from a namespace of the command's own ----------------------------------------

# The command's own namespaces (nested in the test's): a network namespace has no abstract
# socket of the keeper's, a pid namespace no pid to signal. Without --mount-proc the /proc
# seen is the outer one; with it, the new pid namespace's.
NAMESPACES = ["-rn", "-rnpf", "-rpf", "-rnpf --mount-proc"]
SOCKET = '"${CLOUDGUARD_KEEPER%% *}"'  # the run's keeper: its channel's path


@pytest.mark.parametrize("flags", NAMESPACES)
def test_a_refusal_from_a_namespace_of_the_commands_own_makes_the_run_red(
    where: Path, flags: str
) -> None:
    result = attacked_run(where, f"unshare {flags} az account show 2>az.err; cat az.err >&2")

    assert result.returncode == 98, broken(
        "a-refusal-from-another-namespace-is-red", f"the refusal did not reach:\n{show(result)}"
    )
    assert "az-shim reached `az account show`" in result.stderr, broken(
        "the-refusal-is-named", f"the refusal was not named:\n{show(result)}"
    )
    assert "NOT recorded" not in result.stderr, show(result)
    assert targets(where) == [RECORDED_AZ]


@pytest.mark.parametrize("flags", ["-rn", "-rnpf"])
def test_under_hard_a_refusal_from_a_namespace_of_the_commands_own_is_named(
    where: Path, flags: str
) -> None:
    # Inside the seal the supervisor serves the keeper's names in the seal's network
    # namespace only; from a further one the refuser reaches the host keeper's path.
    result = attacked_run(
        where, f"unshare {flags} az account show 2>az.err; cat az.err >&2", hard=True
    )

    assert "az-shim reached `az account show`" in result.stderr, broken(
        "the-refusal-is-named", f"the refusal was not named:\n{show(result)}"
    )
    assert result.returncode == 98 and targets(where) == [RECORDED_AZ], show(result)


def test_a_refusal_that_reaches_no_channel_leaves_its_mark(where: Path) -> None:
    # Another network and pid namespace (no abstract name, no pid to signal), and the
    # channel's path covered in a mount namespace of its own: only the mark is left.
    hide = f"mount --bind /dev/null {SOCKET} && az account show"
    result = attacked_run(where, f"unshare -rnpfm --propagation private sh -c '{hide}'; exit 0")

    assert result.returncode == 97, broken(
        "an-undelivered-refusal-is-red", f"an undelivered refusal left the run:\n{show(result)}"
    )
    assert "tampering: a refuser could not deliver its record to the keeper" in result.stderr
    assert "(the run is marked red)" in result.stderr, show(result)


def test_removing_the_keepers_channel_socket_is_tampering(where: Path) -> None:
    result = attacked_run(where, f"rm {SOCKET}; unshare -rnpf az account show; exit 0")

    assert "tampering: the keeper's channel socket was changed, moved or removed" in (
        result.stderr
    ), broken("a-removed-channel-is-named", f"the channel was removed unseen:\n{show(result)}")
    assert result.returncode == 97, show(result)


def _nested_run_without_the_keeper_variable(
    where: Path, *, hard: bool, before: str = ""
) -> subprocess.CompletedProcess[str]:
    # The outer command swallows the nested run's 98; the nested run's environment dropped
    # the outer keeper: it finds it by its ancestors' pids (inside --hard, where they end at
    # the seal's pid 1: by what the supervisor tells on the seal's SEAL_KEEPERS name, and
    # delivers to the names the supervisor relays to the host's keeper).
    nested = guard_run_script(["az", "account", "show"], where / "nested.jsonl")
    (where / "nested.py").write_text(nested)
    script = f"{before}env -u CLOUDGUARD_KEEPER python3 nested.py 2>nested.err; exit 0"
    result = attacked_run(where, script, hard=hard)

    assert result.returncode == 98, broken(
        "a-nested-reach-reaches-the-outer-verdict",
        f"the nested run kept its reach to itself:\n{show(result)}",
    )
    return result


def test_a_nested_run_without_the_keeper_variable_still_reaches_the_outer_verdict(
    where: Path,
) -> None:
    result = _nested_run_without_the_keeper_variable(where, hard=False)
    assert targets(where) == [RECORDED_AZ], show(result)


def test_inside_hard_a_nested_run_without_the_keeper_variable_reaches_the_outer_verdict(
    where: Path,
) -> None:
    # Its own test, not a parameter of the one above: the controls name that one whole.
    result = _nested_run_without_the_keeper_variable(where, hard=True)
    assert targets(where) == [RECORDED_AZ], show(result)


# What a killed keeper leaves in the per-uid directory: a socket nobody listens on (made
# inside the seal, so that the test knows it is there; a host run's is the same to the gate).
LEFT_BY_A_KILLED_KEEPER = (
    'LEFT="/tmp/cloudguard-keepers-$(id -u)/cloudguard-keeper-0-0-{name}"; '
    "trap 'rm -f \"$LEFT\"' EXIT; "
    "python3 -c 'import socket, sys; "
    'socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])\' "$LEFT"; '
)


def test_inside_hard_a_nested_runs_keeper_connects_to_no_other_keepers_socket(
    where: Path,
) -> None:
    # Inside the seal the per-uid directory is the host's (/tmp is): other runs' keepers and
    # what killed ones left. A keeper's sweep connects to each, and the gate records a
    # connect to a socket not bound inside as a reach (`hard-unix`): the nested run's own
    # doing, not the command's. Inside a seal a keeper sweeps nothing.
    before = LEFT_BY_A_KILLED_KEEPER.format(name=os.urandom(12).hex())
    result = _nested_run_without_the_keeper_variable(where, hard=True, before=before)

    assert targets(where) == [RECORDED_AZ], broken(
        "a-nested-keeper-connects-to-no-other-keeper",
        f"the nested run's keeper left records of its own: {targets(where)}\n{show(result)}",
    )


GARBAGE = (
    "import os, socket, sys\n"
    "path = os.environ['CLOUDGUARD_KEEPER'].split()[0]\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
    "s.connect(path if sys.argv[1] == 'path' else b'\\0' + path.rpartition('/')[2].encode())\n"
    "s.send(b'not a record')\n"
    "s.settimeout(5); s.recv(16)\n"
)


@pytest.mark.parametrize(
    ("way", "hard"), [("abstract", False), ("path", False), ("abstract", True)]
)
def test_a_malformed_message_on_the_keepers_channel_is_tampering(
    where: Path, way: str, hard: bool
) -> None:
    # Under --hard the abstract name is the supervisor's, which relays what it saw.
    (where / "garbage.py").write_text(GARBAGE)
    result = attacked_run(where, f"python3 garbage.py {way}", hard=hard)

    assert result.returncode == 97, broken(
        "a-malformed-message-is-tampering", f"the garbage went unseen:\n{show(result)}"
    )
    assert "a malformed message arrived on the record keeper's channel" in result.stderr, show(
        result
    )


# -- cloudguard run --hard -----------------------------------------------------------------

CURL = "curl -s -m 5 http://198.51.100.7/ >/dev/null"


def test_under_hard_the_command_cannot_stop_or_kill_its_supervisor(where: Path) -> None:
    script = f"kill -STOP $PPID; kill -9 $PPID; kill -9 1; {CURL}; az account show 2>/dev/null"
    result = attacked_run(where, script, hard=True)

    # Both reaches made after the attack are kept, and the run is red for them.
    assert (result.returncode, targets(where)) == (98, ["198.51.100.7:80", RECORDED_AZ]), broken(
        "the-supervisor-survives-its-command",
        f"the attack on the supervisor cost a record:\n{show(result)}",
    )


def test_under_hard_the_command_sees_only_its_own_processes(where: Path) -> None:
    script = "echo pid $$ processes $(ls /proc | grep -c '^[0-9]') >&2"
    result = attacked_run(where, script, hard=True)

    # pid 1 is its init, the shell the next; then ls and grep (and the $(...) subshell)
    seen = result.stderr.split("pid 2 processes ")
    assert len(seen) == 2 and int(seen[1].split()[0]) <= 5, broken(
        "only-its-own-processes", f"the command saw processes outside its run:\n{show(result)}"
    )


def test_under_hard_the_commands_init_cannot_be_read(where: Path) -> None:
    # The init holds nothing of the supervisor's and is out of the command's reach; the
    # command's own descriptors (the control) are listed, so "not listed" means refused.
    script = "ls /proc/$$/fd | wc -l >&2; echo --- >&2; ls /proc/1/fd 2>/dev/null | wc -l >&2"
    result = attacked_run(where, script, hard=True)

    own, _, init = result.stderr.rpartition("---")
    assert int(own.split()[-1]) > 0, show(result)
    assert int(init.split()[0]) == 0, broken(
        "its-init-unreadable", f"the command read its init's descriptors:\n{show(result)}"
    )


def test_under_hard_a_truncated_log_changes_nothing(where: Path) -> None:
    truncate = 'truncate -s "$(head -1 "$CLOUDGUARD_REACH_LOG" | wc -c)" "$CLOUDGUARD_REACH_LOG"'
    result = attacked_run(where, f"{CURL}; {truncate}", hard=True)

    assert result.returncode == 98, f"the reach was silenced:\n{show(result)}"
    assert ALTERED in result.stderr, show(result)
    assert targets(where) == ["198.51.100.7:80"]


def test_under_hard_nothing_outlives_the_run(where: Path) -> None:
    result = attacked_run(where, "setsid sleep 300.75 >/dev/null 2>&1 & sleep 0.2", hard=True)

    left = subprocess.run(["pgrep", "-f", "sleep 300.75"], capture_output=True, text=True)
    assert left.stdout == "", f"still running after the run: {left.stdout}\n{show(result)}"
    assert result.returncode == 0, show(result)


def test_the_tests_own_processes_are_all_gone() -> None:
    # The control of the two "nothing outlives" tests: pgrep finds a live process by its words.
    sleeper = subprocess.Popen(["sleep", "300.5"])
    try:
        found = subprocess.run(["pgrep", "-f", "sleep 300.5"], capture_output=True, text=True)
        assert str(sleeper.pid) in found.stdout.split()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert os.path.exists("/proc/self")
