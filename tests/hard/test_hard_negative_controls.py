"""Negative controls for the hard seal: break the sink's recording, the DNS answer, the resolver's
layout, the drop count, the masks, the gate, the forward relay or the fail-closed checks in a
copy of the package; each named test must fail at its named check (harness:
tests/cloudguard_mutants.py)."""

from __future__ import annotations

import pytest
from cloudguard_mutants import Mutation, assert_turns_red

CORPUS = (
    "tests/hard/test_hard_corpus.py::test_every_technique_is_recorded_and_red_under_the_hard_seal"
)
RUNNING_TEST = (
    "tests/hard/test_hard_corpus.py::test_under_pytest_a_record_names_the_test_that_was_running"
)
FAIL_CLOSED = "tests/hard/test_hard_fail_closed.py::"
AGREE = f"{FAIL_CLOSED}test_what_the_supervisor_relayed_and_the_run_received_must_agree"
KILLED = f"{FAIL_CLOSED}test_a_supervisor_killed_from_outside_before_the_command_ends_is_97"
INTEGRITY = "tests/guard/test_verdict_integrity.py::"
UNSTOPPABLE = f"{INTEGRITY}test_under_hard_the_command_cannot_stop_or_kill_its_supervisor"
OWN_PROCESSES = f"{INTEGRITY}test_under_hard_the_command_sees_only_its_own_processes"
UNREADABLE_INIT = f"{INTEGRITY}test_under_hard_the_commands_init_cannot_be_read"
PROJECT_HOME = (
    "tests/hard/test_hard_masks.py::test_a_projects_own_file_home_is_masked_empty_and_read_only"
)
NAMES_THE_SENDER = (
    "tests/hard/test_hard_corpus.py::test_a_record_names_the_program_and_the_test_that_was_running"
)
BLOCKING_SENDER = (
    "tests/hard/test_hard_corpus.py::test_a_blocking_connect_is_named_by_the_gate_that_made_it"
)
OWN_ARGV = (
    "tests/hard/test_hard_corpus.py::test_each_record_names_the_command_line_its_process_had_then"
)
ATTRIBUTION = "tests/hard/test_hard_attribution.py::"
GONE_PARENT = f"{ATTRIBUTION}test_a_parents_number_is_served_only_while_its_process_lives"
XDIST_RUNNING_TEST = (
    "tests/hard/test_hard_corpus.py::test_under_xdist_each_record_names_its_own_workers_test"
)
LAYOUTS = (
    "tests/hard/test_hard_resolver.py::test_every_lookup_is_recorded_under_every_resolver_layout"
)
NO_SILENT_LOSS = "tests/hard/test_hard_no_silent_loss.py::"
MASKS = "tests/hard/test_hard_masks.py::"
SIDE_DOORS = "tests/hard/test_hard_side_doors.py::"
HOST_SOCKET = f"{SIDE_DOORS}test_a_connect_to_any_other_host_unix_socket_is_recorded_and_refused"
HOST_DATAGRAM = f"{SIDE_DOORS}test_a_datagram_to_a_host_unix_socket_is_recorded_and_refused"

RESOLVER_MUTATIONS = [
    Mutation(
        name="the old resolver order: the seal's file bound first, the masks made after",
        module="guard/hard/supervisor.py",
        original="        holes[layout.target] = sources.resolv_conf\n",
        broken='        linux.mount(sources.resolv_conf, "/etc/resolv.conf", None, '
        "linux.MS_BIND)\n",
        also=(  # and, as then, the sink listens on 127.0.0.53 alone
            (
                "guard/hard/resolver.py",
                "        addresses = [RESOLVER, DEFAULTS[0], *([DEFAULTS[1]] if ipv6 else [])]\n",
                "        addresses = [RESOLVER]\n",
            ),
        ),
        tests=(f"{LAYOUTS}[systemd-resolved-stub]",),
        # the run stops before the command, naming the layout the lookups could not reach from
        check="lookups-reach-the-sink-under-every-layout",
    ),
    Mutation(
        name="no probe: a layout the sink cannot reach goes unnoticed",
        module="guard/hard/supervisor.py",
        original="        if not answered or os.waitstatus_to_exitcode(status) != 0:\n",
        broken="        if False:\n",
        tests=(
            "tests/hard/test_hard_resolver.py::"
            "test_a_layout_whose_lookups_cannot_reach_the_sink_stops_the_run_naming_it",
        ),
        check="an-unreachable-layout-stops-the-run",
    ),
    Mutation(
        name="no DNS over TCP",
        module="guard/hard/sink.py",
        original="            if len(self.tcp_queries) >= MAX_TCP_QUERIES:\n",
        broken="            if True:\n",
        tests=(f"{LAYOUTS}[plain-file]",),
        check="lookups-over-tcp-are-recorded",
    ),
    Mutation(
        name="the seal's resolv.conf is bound writable",
        module="guard/hard/masks.py",
        original="                _read_only(target)\n",
        broken="                pass\n",
        # Every other mount is frozen read-only after (freeze_the_rest): that second lock
        # is broken too, or the promise would hold by it alone.
        also=(("guard/hard/masks.py", "            _read_only(point)\n", "            pass\n"),),
        tests=(f"{LAYOUTS}[plain-file]",),
        check="the-seals-resolv-conf-is-read-only",
    ),
    Mutation(
        name="resolver daemons' sockets are not masked",
        module="guard/hard/masks.py",
        original='    ("/run/nscd", f"nscd: {RESOLVER}"),\n',
        broken="",
        also=(("guard/hard/masks.py", '    ("/var/run/nscd", f"nscd: {RESOLVER}"),\n', ""),),
        tests=(
            "tests/hard/test_hard_resolver.py::"
            "test_a_resolver_daemons_socket_is_masked_so_lookups_meet_the_sink",
        ),
        check="resolver-daemons-are-masked",
    ),
]
LOSS_MUTATIONS = [
    Mutation(
        name="noise told by destination (the old filter): multicast is dropped unrecorded",
        module="guard/hard/packets.py",
        original="            return self.protocol == IGMP\n",
        broken="            return 224 <= self.header[16] <= 239\n",
        tests=(
            f"{NO_SILENT_LOSS}"
            "test_a_datagram_to_a_multicast_group_is_recorded_and_the_kernels_chatter_is_not",
        ),
        check="a-multicast-datagram-is-recorded",
    ),
    Mutation(
        name="what the kernel dropped is not reported",
        module="guard/hard/supervisor.py",
        original="    dropped = sink.dropped()\n",
        broken="    dropped: dict[str, int] = {}\n",
        tests=(
            f"{NO_SILENT_LOSS}test_a_burst_beyond_cg0s_queue_is_97_naming_how_many_were_dropped",
            f"{NO_SILENT_LOSS}test_a_flood_beyond_the_resolvers_buffer_is_97_naming_it",
        ),
        check="a-drop-fails-the-run-closed",
    ),
    Mutation(
        name="the gate describes no sender",
        module="guard/hard/gate.py",
        original="                self.flows.remember(job.view.proto, port, job.destination, "
        "job.sender)\n",
        broken="                pass\n",
        also=(
            (
                "guard/hard/gate.py",
                "            self.flows.remember(view.proto, port, destination, sender)\n",
                "            pass\n",
            ),
        ),
        tests=(
            f"{NO_SILENT_LOSS}test_a_sender_that_exited_before_the_sink_read_its_datagram_is_named",
        ),
        check="an-exited-sender-is-named",
    ),
    Mutation(
        name="forwarded connections wait on the sink's loop",
        module="guard/hard/sink.py",
        original="socket.MSG_DONTWAIT",
        broken="0",
        also=(
            (
                "guard/hard/forward.py",
                "            threading.Thread(target=self._relay, args=(inside, port), "
                "daemon=True).start()\n",
                "            self._relay(inside, port)\n",
            ),
        ),
        tests=(
            "tests/hard/test_hard_forward.py::"
            "test_forwarded_connections_to_a_silent_service_do_not_hold_the_sink",
        ),
        check="the-sink-answers-while-forwards-wait",
    ),
    Mutation(
        name="the relay's connect to the host is not bounded",
        module="guard/hard/forward.py",
        original="timeout=CONNECT_TIMEOUT",
        broken="timeout=None",
        tests=(
            "tests/hard/test_hard_forward.py::"
            "test_a_forward_the_host_never_completes_is_closed_after_the_bounded_connect",
        ),
        check="the-relays-connect-is-bounded",
    ),
    Mutation(
        name="forwarded connections are relayed without a bound",
        module="guard/hard/forward.py",
        original="        self._slots = threading.BoundedSemaphore(MAX_RELAYS)\n",
        broken="        self._slots = threading.Semaphore(1 << 20)\n",
        tests=(
            "tests/hard/test_hard_forward.py::"
            "test_forwarded_connections_past_the_bound_are_closed_at_once",
        ),
        check="relays-past-the-bound-close-at-once",
    ),
]
MASK_MUTATIONS = [
    Mutation(
        name="a working directory under a mask is not checked",
        module="guard/hard/masks.py",
        original='    """A directory the run needs must not be under an `EMPTY` mask."""\n',
        broken="    return\n",
        also=(
            (
                "guard/hard/supervisor.py",
                "    os.chdir(setup.cwd)",
                "    (lambda _: None)(setup.cwd)",
            ),
        ),
        tests=(f"{MASKS}test_a_working_directory_inside_a_masked_home_stops_the_run_naming_it",),
        check="no-read-through-a-masked-cwd",
    ),
    Mutation(
        name="masks follow HOME only",
        module="guard/hard/masks.py",
        original='    homes = list(dict.fromkeys(h for h in (environ.get("HOME"), '
        "account_home(uid)) if h))\n",
        broken='    homes = [environ["HOME"]]\n',
        tests=(f"{MASKS}test_masks_cover_the_accounts_home_as_well_as_home",),
        check="the-accounts-home-is-masked",
    ),
    Mutation(
        name="the masks' sources stay mounted",
        module="guard/hard/supervisor.py",
        original="    sources.detach()\n",
        broken="    pass\n",
        tests=(f"{MASKS}test_a_masks_source_cannot_be_reached_or_written_inside",),
        check="a-masks-source-is-out-of-reach",
    ),
    Mutation(
        name="the host's daemon sockets are not masked",
        module="guard/hard/masks.py",
        original="    entries += [Entry(path, EMPTY, reason) for path, reason in HOST_SOCKETS]\n",
        broken="",
        tests=(f"{SIDE_DOORS}test_the_hosts_well_known_daemon_sockets_are_masked",),
        check="host-daemon-sockets-are-masked",
    ),
    Mutation(
        name="the repository's git hooks stay writable",
        module="guard/hard/masks.py",
        # The one place that finds them: the mask list, the read-only roots and the whole
        # metadata's read-only bind all use it.
        original="        if os.path.lexists(dot_git):\n            break\n",
        broken="        if os.path.lexists(dot_git):\n            return None\n",
        tests=(f"{SIDE_DOORS}test_the_repositorys_git_hooks_and_config_are_read_only_inside",),
        check="git-hooks-are-read-only",
    ),
]
GATE_MUTATIONS = [
    Mutation(
        name="the gate lets every unix socket through",
        module="guard/hard/gate.py",
        original="        if key in self.allowed or key in diag.bound_unix_sockets():\n",
        broken="        if True:\n",
        tests=(HOST_SOCKET, HOST_DATAGRAM),
        check={
            HOST_SOCKET: "a-host-unix-socket-is-refused",
            HOST_DATAGRAM: "a-host-datagram-is-refused",
        },
    ),
    Mutation(
        name="--allow-unix is not honoured",
        module="guard/hard/gate.py",
        original="        if key in self.allowed or key in diag.bound_unix_sockets():\n",
        broken="        if key in diag.bound_unix_sockets():\n",
        tests=(
            f"{SIDE_DOORS}test_allow_unix_lets_that_socket_through_and_shows_it_on_the_seal_line",
        ),
        check="an-allowed-socket-goes-through",
    ),
    Mutation(
        name="every socket family is allowed",
        module="guard/hard/seccomp_filter.py",
        original='    p.jump(_JEQ_K, arch.calls["socket"], "family", 0)\n',
        broken='    p.jump(_JEQ_K, arch.calls["socket"], "allow", 0)\n',
        tests=(
            f"{SIDE_DOORS}"
            "test_a_socket_family_the_network_namespace_does_not_isolate_is_refused_and_recorded",
        ),
        check="an-unisolated-family-is-recorded",
    ),
    Mutation(
        name="io_uring is allowed",
        module="guard/hard/seccomp_filter.py",
        original='    p.jump(_JEQ_K, IO_URING_SETUP, "deny", 0)\n',
        broken="",
        tests=(f"{SIDE_DOORS}test_io_uring_is_refused_inside",),
        check="io-uring-is-refused",
    ),
    Mutation(
        name="a host without the gate says nothing",
        module="guard/hard/launch.py",
        original="        if self.limit:\n            suffix +=",
        broken="        if False:\n            suffix +=",
        tests=(
            f"{SIDE_DOORS}"
            "test_a_host_that_cannot_enforce_the_gate_declares_its_limit_on_the_seal_line",
        ),
        check="the-gate-limit-is-declared",
    ),
]
SEAL_MUTATIONS = [
    Mutation(
        name="the sink records nothing",
        module="guard/hard/sink.py",
        original="        return attribution.reach_entry(via, target, sender, extra)\n",
        broken="        return None  # type: ignore[return-value]\n",
        tests=(f"{CORPUS}[curl]", f"{CORPUS}[getent-lookup]", f"{CORPUS}[python-isolated-imds]"),
        check="the-reach-is-recorded",
    ),
    Mutation(
        name="the resolver answers no address",
        module="guard/hard/dns.py",
        original="    if query.query_type in (A, AAAA):\n",
        broken="    if False:\n",
        tests=(
            "tests/hard/test_hard_corpus.py::test_a_connection_is_attributed_to_the_name_it_was_resolved_from",
        ),
        # the probe's lookup gets no address either: the run stops before the command
        check="lookups-are-answered-with-an-address",
    ),
    Mutation(
        name="pytest does not tell the sink its running test",
        module="guard/hard/running.py",
        original="    if not seal_root:\n        return\n",
        broken="    if True:\n        return\n",
        tests=(RUNNING_TEST, XDIST_RUNNING_TEST),
        check="records-name-the-running-test",
    ),
    Mutation(
        name="no credential home is masked",
        module="guard/hard/masks.py",
        original='        Entry(os.path.join(home, name.removeprefix("~/")), EMPTY, '
        '"a credential home")\n',
        broken='        Entry("/nonexistent", EMPTY, "a credential home")\n',
        tests=(
            "tests/hard/test_hard_masks.py::test_planted_credentials_are_invisible_inside_and_untouched_after",
        ),
        check="credential-homes-masked",
    ),
    Mutation(
        name="a file home is not masked (only directories are)",
        module="guard/hard/masks.py",
        original="            else:\n                linux.mount(empty_file, entry.path,",
        broken="            else:\n                continue\n"
        "                linux.mount(empty_file, entry.path,",
        tests=(PROJECT_HOME,),
        check="a-projects-file-home-is-masked",
    ),
    Mutation(
        name="a project's [hard.masked_homes] is not read",
        module="guard/seal_registry.py",
        original="masked_homes=tuple(dict.fromkeys(h for f in files for h in f.masked_homes)),",
        broken="masked_homes=tuple(default.masked_homes),",
        tests=(PROJECT_HOME,),
        check="a-projects-file-home-is-masked",
    ),
    *(
        Mutation(
            name=f"a record names {whose} as the sender",
            module="guard/hard/attribution.py",
            original="    return Sender(pid=inner, ppid=inner_parent,",
            broken=f"    return Sender(pid={pid}, ppid=inner_parent,",
            tests=(NAMES_THE_SENDER,),
            check="the-record-names-the-sender",
        )
        for whose, pid in (("no pid", "None"), ("the parent's pid", "inner_parent"))
    ),
    Mutation(
        name="a record names the argv remembered for another command line of its program",
        module="guard/hard/attribution.py",
        original="    key = tuple(argv)\n",
        broken="    key = tuple(argv[:1])\n",
        tests=(OWN_ARGV,),
        check="records-name-their-own-argv",
    ),
    Mutation(
        name="the sink serves a parent's number after its process is gone",
        module="guard/hard/attribution.py",
        original="            if _lives(known[0]):\n",
        broken="            if True:\n",
        tests=(GONE_PARENT,),
        check="a-gone-parent-is-not-served",
    ),
    Mutation(
        name="the gate leaves a waiting caller's socket non-blocking after its connect",
        module="guard/hard/gate.py",
        original="fcntl.fcntl(fd, fcntl.F_SETFL, flags)  # the caller's socket blocks",
        broken="None  # the caller's socket blocks",
        tests=(BLOCKING_SENDER,),
        check="the-caller-waits-on-its-own-blocking-socket",
    ),
    Mutation(
        name="the gate names itself as the process a connection is made for",
        module="guard/hard/gate.py",
        original="            self.flows.connecting(inode, job.process)  # named by its socket",
        broken="            self.flows.connecting(inode, os.getpid())  # named by its socket",
        tests=(BLOCKING_SENDER,),
        check="the-record-names-the-sender",
    ),
    Mutation(
        name="the host check ignores disabled user namespaces",
        module="guard/hard/requirements.py",
        original='if _sysctl("user.max_user_namespaces") == "0":',
        broken="if False:",
        tests=(
            "tests/hard/test_hard_fail_closed.py::test_no_user_namespaces_is_75_naming_the_sysctl_and_nothing_runs",
        ),
        check="the-sysctl-is-named",
    ),
    Mutation(
        name="a setup failure is not reported as one",
        module="guard/hard/launch.py",
        original='    if "setup_error" in merged:\n',
        broken="    if False:\n",
        tests=(
            "tests/hard/test_hard_fail_closed.py::test_a_device_that_is_not_a_tun_is_75_naming_it_and_nothing_runs",
        ),
        check="the-tun-refusal-is-named",
    ),
    Mutation(
        name="a record the sink could not relay is not reported",
        module="guard/hard/launch.py",
        original='    if merged.get("lost"):\n',
        broken="    if False:\n",
        tests=(AGREE,),
        check="lost-record-reported",
    ),
    Mutation(
        name="the relayed count is not checked",
        module="guard/hard/launch.py",
        original='    if str(merged.get("recorded")) != str(received):\n',
        broken="    if False:\n",
        tests=(AGREE,),
        check="relayed-count-checked",
    ),
    Mutation(
        name="a dead sink is not noticed",
        module="guard/hard/launch.py",
        original='    if "code" not in merged:\n',
        broken='    if "code" not in merged:\n        return code\n    if False:\n',
        tests=(KILLED,),
        check="a-dead-sink-is-97",
    ),
    Mutation(
        name="the command shares the supervisor's pid namespace",
        module="guard/hard/command_init.py",
        original="        linux.unshare(linux.CLONE_NEWPID)\n",
        broken="        pass\n",
        also=(
            (
                "guard/hard/command_init.py",
                '        linux.mount("proc", "/proc", "proc", linux.MS_NOSUID',
                '        (lambda *a: None)("proc", "/proc", "proc", linux.MS_NOSUID',
            ),
        ),
        tests=(UNSTOPPABLE, OWN_PROCESSES),
        check={
            UNSTOPPABLE: "the-supervisor-survives-its-command",
            OWN_PROCESSES: "only-its-own-processes",
        },
    ),
    Mutation(
        name="the command's init can be traced and read",
        module="guard/hard/command_init.py",
        original="    linux.set_dumpable(False)  # before the command exists",
        broken="    linux.set_dumpable(True)  # before the command exists",
        tests=(UNREADABLE_INIT,),
        check="its-init-unreadable",
    ),
]


MUTATIONS = [
    *SEAL_MUTATIONS,
    *RESOLVER_MUTATIONS,
    *LOSS_MUTATIONS,
    *MASK_MUTATIONS,
    *GATE_MUTATIONS,
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_the_hard_seal_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
