"""Nothing lost silently: every packet that reaches cg0 or the resolver is recorded, or the run
is 97 naming how many were dropped; a sender that is gone is still named.

To overflow a queue on purpose the test stops the supervisor (as the host may; the command
cannot name it) while the command floods, then lets it go on (`pause_sink.py`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from hard_helpers import HardRun, hard_run, python_child, without_the_gate
from named_checks import broken

from cloudguard.guard.hard import attribution

PAUSE_SINK = Path(__file__).with_name("pause_sink.py")
HANDSHAKE = """
import os, socket, sys, time
handshake = sys.argv[1]
def wait_for(name):
    while not os.path.exists(os.path.join(handshake, name)):
        time.sleep(0.01)
# Every file the command writes is opened before the supervisor is stopped: under the hard
# seal an open for writing waits for the gate's answer, and the gate is in the supervisor.
progress = os.open(os.path.join(handshake, "progress"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
def say(name):
    os.write(progress, name.encode() + b" ")
"""
FLOOD_CG0 = (
    HANDSHAKE
    + """
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("203.0.113.9", 9))  # judged now, while the supervisor runs; send() is never
say("ready")
wait_for("stopped")
for _ in range(3000):
    s.send(b"x")
say("sent")
"""
)
FLOOD_RESOLVER = (
    HANDSHAKE
    + """
import struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
s.connect(("127.0.0.53", 53))
say("ready")
wait_for("stopped")
for n in range(400):  # each query padded to 60 kB: the resolver's buffer holds ~130 of them
    name = b"".join(bytes([len(p)]) + p for p in (b"q%d" % n, b"amazonaws", b"com")) + b"\\0"
    query = struct.pack("!HHHHHH", n, 0x0100, 1, 0, 0, 0) + name + struct.pack("!HH", 1, 1)
    s.send(query + b"\\0" * (60000 - len(query)))
say("sent")
"""
)


def paused_run(tmp_path: Path, code: str, queue: str = "") -> tuple[HardRun, Path]:
    handshake = tmp_path / "handshake"
    handshake.mkdir()
    setup = f"{sys.executable} {PAUSE_SINK} $$ {handshake} {queue} & S=$!; "
    command = [*python_child("-I", code=code), str(handshake)]
    return hard_run(tmp_path, *command, host_setup=setup), handshake


def test_a_burst_beyond_cg0s_queue_is_97_naming_how_many_were_dropped(tmp_path: Path) -> None:
    # The host shrinks cg0's queue to 100 packets while the sink is stopped: 3,000 datagrams
    # sent then, at most 100 can wait; the kernel drops the rest and says how many.
    run, _ = paused_run(tmp_path, FLOOD_CG0, queue="100")

    dropped = re.search(r"dropped (\d+) packet\(s\) before the sink could record them", run.stderr)
    assert run.returncode == 97, broken(
        "a-drop-fails-the-run-closed",
        f"a flood that overflowed cg0 was not failed closed:\n{run.output}",
    )
    assert dropped is not None, f"the run did not say how many were dropped:\n{run.stderr}"
    recorded = len(run.targets("hard-udp"))
    assert int(dropped.group(1)) + recorded == 3000, (recorded, dropped.group(0))
    assert "cg0 queue" in run.stderr and recorded <= 100, run.stderr[-2000:]


def test_a_flood_beyond_the_resolvers_buffer_is_97_naming_it(tmp_path: Path) -> None:
    run, _ = paused_run(tmp_path, FLOOD_RESOLVER)

    dropped = re.search(r"dropped (\d+) packet\(s\)", run.stderr)
    assert run.returncode == 97, broken(
        "a-drop-fails-the-run-closed",
        f"a flood that overflowed the resolver was not failed closed:\n{run.output[-3000:]}",
    )
    assert dropped is not None and "resolver 127.0.0.53:53" in run.stderr, run.stderr[-2000:]
    recorded = len(run.targets("hard-dns"))
    assert int(dropped.group(1)) + recorded == 400, (recorded, dropped.group(0))


SHORT_LIVED = (
    HANDSHAKE
    + """
import struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("203.0.113.9", 4789))
lookup = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
lookup.connect(("127.0.0.53", 53))
question = b"".join(bytes([len(p)]) + p for p in (b"sts", b"amazonaws", b"com")) + b"\\0"
alive = os.open(os.path.join(handshake, "alive"), os.O_WRONLY)  # the host sees us exit by it
say("ready")
wait_for("stopped")
print("sender", os.getpid(), flush=True)
s.send(b"x")
lookup.send(struct.pack("!HHHHHH", 7, 0x0100, 1, 0, 0, 0) + question + struct.pack("!HH", 1, 1))
os._exit(0)
"""
)


def test_a_sender_that_exited_before_the_sink_read_its_datagram_is_named(tmp_path: Path) -> None:
    handshake_fifo = tmp_path / "handshake" / "alive"
    run, handshake = paused_run_with_fifo(tmp_path, SHORT_LIVED, handshake_fifo)

    records = [r for r in run.reaches() if r["via"] in ("hard-udp", "hard-dns")]
    sender = int(run.stdout.split("sender ")[1].split()[0])
    assert sorted(str(r["target"]) for r in records) == ["203.0.113.9:4789", "sts.amazonaws.com"]
    for record in records:  # a datagram out, and a lookup
        assert record["pid"] == sender, broken(
            "an-exited-sender-is-named",
            f"the record of a sender that had exited does not name it: {record}\n{run.output}",
        )
        assert record["argv"][:2] == [sys.executable, "-I"], record
        assert "unattributed" not in record, record
    assert handshake.is_dir()


def paused_run_with_fifo(
    tmp_path: Path, code: str, fifo: Path, launcher: Sequence[str] = ("-m", "cloudguard")
) -> tuple[HardRun, Path]:
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    setup = f"{sys.executable} {PAUSE_SINK} $$ {fifo.parent} & S=$!; "
    command = [*python_child("-I", code=code), str(fifo.parent)]
    return hard_run(tmp_path, *command, host_setup=setup, launcher=launcher), fifo.parent


def test_without_the_gate_the_record_of_a_sender_gone_says_why(tmp_path: Path) -> None:
    # A kernel without seccomp user notification: nothing describes the sender while it
    # sends, and the record says so.
    older_kernel = without_the_gate(tmp_path)
    run, _ = paused_run_with_fifo(tmp_path, SHORT_LIVED, tmp_path / "handshake" / "alive",
                                  launcher=older_kernel)  # fmt: skip

    records = [r for r in run.reaches() if r["via"] in ("hard-udp", "hard-dns")]
    assert len(records) == 2 and "limits=unix-sockets" in run.stderr, run.output
    for record in records:
        assert record["pid"] is None, record
        assert record["unattributed"] == attribution.NO_GATE, record


MULTICAST = """
import socket, struct
member = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # the kernel reports the join (IGMP)
member.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                  socket.inet_aton("239.1.2.3") + socket.inet_aton("0.0.0.0"))
sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 8)  # routable: it could leave
sender.sendto(b"payload", ("239.1.2.3", 9999))
"""


def test_a_datagram_to_a_multicast_group_is_recorded_and_the_kernels_chatter_is_not(
    tmp_path: Path,
) -> None:
    run = hard_run(tmp_path, *python_child("-I", code=MULTICAST))

    assert "239.1.2.3:9999" in run.targets("hard-udp"), broken(
        "a-multicast-datagram-is-recorded",
        f"the multicast datagram was not recorded:\n{run.output}",
    )
    protocols = {str(r["protocol"]) for r in run.reaches()}
    assert protocols == {"udp"}, f"the kernel's own IGMP/MLD was recorded: {protocols}"
    assert run.returncode == 98, run.output


# Each refusal (ICMP port unreachable) is reported on the connected socket's next send,
# which then fails without sending (ECONNREFUSED): the sender counts the datagrams it sent.
BURST = """
import multiprocessing, socket
def flood(worker):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("203.0.113.%d" % (1 + worker), 9))
    sent = 0
    while sent < 500:
        try:
            s.send(b"x")
            sent += 1
        except ConnectionRefusedError:
            pass
    return sent
with multiprocessing.get_context("fork").Pool(4) as pool:
    print("sent", sum(pool.map(flood, range(4))))
"""


def test_a_burst_within_the_queue_is_recorded_whole(tmp_path: Path) -> None:
    run = hard_run(tmp_path, *python_child("-I", code=BURST))

    addresses = [str(r["address"]) for r in run.reaches() if r["via"] == "hard-udp"]
    assert run.returncode == 98 and "before the sink could record" not in run.stderr, run.stderr[
        -2000:
    ]
    assert sorted(set(addresses)) == [f"203.0.113.{n}" for n in range(1, 5)]
    assert run.stdout.split() == ["sent", "2000"], run.stdout
    assert len(addresses) == 2000, f"{len(addresses)} of 2000 recorded"
