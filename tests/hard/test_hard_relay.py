"""The hard seal's relay answers a refuser only once the run's keeper holds its record.

A test that looks at the log right after its reach (the per-test check of a
pytest session inside the seal) must find the record there; the relay waits
for the host's one-byte answer to each line before it returns.
"""

from __future__ import annotations

import os
import threading

from named_checks import broken

from cloudguard.guard.hard.relay import Relay

LINE = b'{"schema":1,"kind":"reach","target":"x"}\n'


def test_the_relay_returns_only_after_the_host_answered() -> None:
    records_read, records_write = os.pipe()
    answers_read, answers_write = os.pipe()
    relay = Relay(records_write, answers_read)
    returned = threading.Event()
    worker = threading.Thread(target=lambda: (relay.receive(LINE), returned.set()))
    worker.start()
    try:
        passed_on = os.read(records_read, 4096)
        os.write(answers_write, b"k")  # the host's answer: the run holds the record
        worker.join(10)
        # A relay that waited for the answer has taken it: the pipe is empty. One that did not
        # wait left it there (no timing: what was read is a fact).
        os.set_blocking(answers_read, False)
        try:
            left = os.read(answers_read, 1)
        except BlockingIOError:
            left = b""
    finally:
        for fd in (records_read, records_write, answers_read, answers_write):
            os.close(fd)

    assert passed_on == LINE
    assert returned.is_set() and relay.count == 1 and relay.lost is None
    assert left == b"", broken(
        "the-relay-waits-for-the-answer",
        "the relay answered the refuser before the run held the record",
    )


def test_a_host_that_stops_answering_is_a_lost_record() -> None:
    records_read, records_write = os.pipe()
    answers_read, answers_write = os.pipe()
    os.close(answers_write)  # the host is gone
    relay = Relay(records_write, answers_read)
    try:
        taken = relay.receive(LINE)
    finally:
        for fd in (records_read, records_write, answers_read):
            os.close(fd)

    assert not taken and relay.lost is not None and "stopped answering" in relay.lost


def test_the_relays_lines_are_the_bytes_record_line_writes() -> None:
    """The supervisor's own records go by json's C encoder: byte for byte what the refusers'
    writer makes of them (the host keeps what it parses)."""
    from cloudguard.guard import reach
    from cloudguard.guard.hard import attribution, relay

    named = attribution.Sender(
        pid=3, ppid=1, argv=[b"curl", b"--token", b"x", "\u00e9".encode()], cwd="/w/\u00e9",
        test="t.py::test_\u00e9 (call)",
    )  # fmt: skip
    unnamed = attribution.Sender(unattributed=attribution.EXITED)
    tcp: dict[str, object] = {"protocol": "tcp", "address": "198.51.100.7", "port": 443}
    dns: dict[str, object] = {"protocol": "dns", "name": "a\nb.example", "query_type": "A"}
    for record in (
        attribution.reach_entry("hard-tcp", "198.51.100.7:443", named, {**tcp, "name": None}),
        attribution.reach_entry("hard-dns", "a\nb.example", unnamed, dns),
        attribution.reach_entry("hard-socket", "AF_VSOCK", named, {"family": 40}),
    ):
        assert relay._line(record) == reach.record_line(record), record
