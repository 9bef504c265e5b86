"""The hard seal: the command runs in new user, network and mount namespaces.

Inside, the only network is loopback and a TUN device that is the default
route for IPv4 and IPv6. cloudguard reads that device: every TCP SYN and
UDP datagram to a non-loopback address is recorded (relayed to the run's
record keeper) and answered at once (reset / unreachable), every DNS query is answered by
cloudguard with a synthetic address per name, the cloud credential homes
and the host's daemon sockets are masked by empty read-only mounts, and a
seccomp gate records and refuses a connect to any other host unix socket.
Linux only; see docs/guard.md.

Modules, one job each: `requirements` (can namespaces be made here, and
the gate), `linux` (the system calls made directly), `namespaces` (the
namespaces and cg0), `routes` (rtnetlink), `resolver` (the host's resolver
layout, the sink's listeners), `masks` (what is hidden or frozen inside),
`packets` (parse and answer IP packets), `dns` (the resolver's answers and
address pool), `attribution` and `diag` (which process sent a packet),
`sink` (the loop that records and refuses), `relay` (records to the host),
`seccomp_filter` and `gate` (unix sockets and socket families),
`command_init` (the command's pid namespace and init), `forward` (named
host-loopback ports), `supervisor` (runs inside), `launch` (the host side of
`cloudguard run --hard`), `protocol` (the status pipe), `running` (a pytest
process's test).

Also here (each in its own words, the first line of its docstring):

- `syscalls`: The calls that write at a path: their layout and numbers, for the filter and
  the judge.
- `writes`: Under the hard seal, a write into an ambient root is refused where it happens,
  and recorded.
"""
