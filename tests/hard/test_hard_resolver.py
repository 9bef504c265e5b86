"""Every resolver layout records every lookup: each host's layout simulated in a mount namespace.

The test's outer namespace plays the host (`hard_run(mounts=True)`): a tmpfs
on /run holds what systemd-resolved, resolvconf or nscd would have made, and
an overlay on /etc gives /etc/resolv.conf the shape that host has (a plain
file, a symlink, none at all), so CI proves every layout whatever its own
host is. Under each, lookups made by glibc over UDP and over TCP
(`RES_OPTIONS=use-vc`) and by Python must be recorded, and the seal's
resolv.conf must be read-only inside.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hard_helpers import LOOKUP_UNANSWERED, hard_run
from named_checks import broken

# (layout, shell that makes it in the outer namespace, the words its 75 line would name)
OVERLAY = (
    'T="$(mktemp -d)"; mkdir "$T/upper" "$T/work"; '
    'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/upper,workdir=$T/work" /etc; '
    "rm -f /etc/resolv.conf; "
)
RUN = "mount -t tmpfs run /run; "
STUB = (
    "mkdir -p /run/systemd/resolve; "
    "echo 'nameserver 127.0.0.53' > /run/systemd/resolve/stub-resolv.conf; "
    "echo 'nameserver 10.9.9.9' > /run/systemd/resolve/resolv.conf; "
)
LAYOUTS = {
    "plain-file": (OVERLAY + "echo 'nameserver 10.9.9.9' > /etc/resolv.conf; ",
                   "/etc/resolv.conf is a plain file"),
    "systemd-resolved-stub": (
        RUN + STUB + OVERLAY + "ln -s ../run/systemd/resolve/stub-resolv.conf /etc/resolv.conf; ",
        "systemd-resolved's stub",
    ),
    "systemd-resolved-uplink": (
        RUN + STUB + OVERLAY + "ln -s ../run/systemd/resolve/resolv.conf /etc/resolv.conf; ",
        "systemd-resolved's uplink list",
    ),
    "resolvconf": (
        RUN + "mkdir -p /run/resolvconf; echo 'nameserver 10.9.9.9' > /run/resolvconf/resolv.conf; "
        + OVERLAY + "ln -s ../run/resolvconf/resolv.conf /etc/resolv.conf; ",
        "resolvconf",
    ),
    "missing-file": (OVERLAY, "no /etc/resolv.conf"),
    "dangling-symlink": (
        RUN + OVERLAY + "ln -s ../run/resolvconf/resolv.conf /etc/resolv.conf; ", "(dangling)"
    ),
}  # fmt: skip
# As on a real host, the invoking user cannot write /etc (here it is root of the test's user
# namespace, which owns the overlay).
READ_ONLY_ETC = "mount -o remount,bind,ro /etc; "
LOOKUPS = (
    "getent hosts sts.amazonaws.com; "
    "RES_OPTIONS=use-vc getent hosts s3.amazonaws.com; "
    f"{sys.executable} -I -c \"import socket; socket.getaddrinfo('management.azure.com', 443)\"; "
    "(chmod u+w /etc/resolv.conf; echo 'nameserver 10.9.9.9' >> /etc/resolv.conf) 2>/dev/null "
    "&& echo RESOLV-CONF-WRITTEN; "
    "exit 0"
)


@pytest.mark.parametrize("layout", LAYOUTS, ids=list(LAYOUTS))
def test_every_lookup_is_recorded_under_every_resolver_layout(tmp_path: Path, layout: str) -> None:
    setup, named = LAYOUTS[layout]
    run = hard_run(tmp_path, "sh", "-c", LOOKUPS, host_setup=setup + READ_ONLY_ETC, mounts=True)

    assert LOOKUP_UNANSWERED not in run.stderr, broken(
        "lookups-reach-the-sink-under-every-layout",
        f"the run stopped: a lookup under the {named} layout would not reach the sink:\n"
        f"{run.output}",
    )
    assert run.returncode == 98, (
        f"lookups under the {named} layout were not recorded:\n{run.output}"
    )
    lookups = {str(r["name"]): str(r["protocol"]) for r in run.reaches() if r["via"] == "hard-dns"}
    assert lookups.get("sts.amazonaws.com") == "dns", f"glibc over UDP ({named}): {lookups}"
    assert lookups.get("s3.amazonaws.com") == "dns-tcp", broken(
        "lookups-over-tcp-are-recorded", f"glibc over TCP ({named}): {lookups}"
    )
    assert "management.azure.com" in lookups, f"Python ({named}): {lookups}"
    assert "RESOLV-CONF-WRITTEN" not in run.stdout, broken(
        "the-seals-resolv-conf-is-read-only", f"the seal's resolv.conf was writable:\n{run.output}"
    )


# A stand-in for nscd: it logs the type of each request (nscd's header: version, type, key
# length). cloudguard itself may ask it for the user's home (passwd, type 0 or 1) before the
# seal exists; a lookup of a host name (types 4, 5, 14) could only come from inside.
FAKE_NSCD = """
import os, signal, socket, struct, sys
signal.alarm(60)
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
server.listen()
open(sys.argv[2], "w").close()
while True:
    connection, _ = server.accept()
    request = connection.recv(12)
    kind = struct.unpack("=iii", request)[1] if len(request) == 12 else -1
    with open(sys.argv[2], "a") as log:
        log.write(f"{kind}\\n")
    connection.close()
"""
HOST_LOOKUPS = {"4", "5", "14"}  # GETHOSTBYNAME, GETHOSTBYNAMEv6, GETAI


def test_a_resolver_daemons_socket_is_masked_so_lookups_meet_the_sink(tmp_path: Path) -> None:
    # nscd on the host: glibc asks its socket first. Inside, the socket is masked: the lookup
    # falls through to DNS, which the sink records; the host's nscd is never contacted.
    daemon = tmp_path / "fake_nscd.py"
    daemon.write_text(FAKE_NSCD)
    requests = tmp_path / "nscd-requests"
    setup = (
        RUN + f"{sys.executable} {daemon} /run/nscd/socket {requests} & S=$!; "
        f"while [ ! -e {requests} ]; do sleep 0.02; done; "
    )
    # The control: outside the seal, in the same namespace, glibc does ask the fake nscd.
    control = f"getent hosts control.example >/dev/null 2>&1; echo sealed >> {requests}; "
    script = 'getent hosts sts.amazonaws.com; echo "NSCD:$(ls /run/nscd)"; exit 0'
    run = hard_run(tmp_path, "sh", "-c", script, host_setup=setup + control, mounts=True)

    outside, _, inside = requests.read_text().partition("sealed")
    assert "NSCD:\n" in run.stdout, broken(
        "resolver-daemons-are-masked", f"/run/nscd was not masked:\n{run.output}"
    )
    assert set(outside.split()) & HOST_LOOKUPS, f"glibc never asked the fake nscd: {outside}"
    assert not set(inside.split()) & HOST_LOOKUPS, f"nscd answered inside:\n{run.output}"
    assert "sts.amazonaws.com" in run.targets("hard-dns"), run.output
    assert run.returncode == 98, run.output


def test_a_layout_whose_lookups_cannot_reach_the_sink_stops_the_run_naming_it(
    tmp_path: Path,
) -> None:
    # nsswitch.conf that never asks DNS: no lookup inside could be recorded, so the run must
    # not start (75), naming what it found, rather than run with a silent gap.
    setup = OVERLAY + (
        "echo 'nameserver 10.9.9.9' > /etc/resolv.conf; echo 'hosts: files' > /etc/nsswitch.conf; "
    )
    run = hard_run(tmp_path, "touch", str(tmp_path / "RAN"), host_setup=setup, mounts=True)

    assert run.returncode == 75, broken(
        "an-unreachable-layout-stops-the-run",
        f"the run did not stop before the command:\n{run.output}",
    )
    assert LOOKUP_UNANSWERED in run.stderr, run.output
    assert "nsswitch hosts: files" in run.stderr, f"the layout was not named:\n{run.output}"
    assert not (tmp_path / "RAN").exists(), "the command ran"
