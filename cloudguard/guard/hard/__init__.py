"""The hard seal: the command runs in new user, network and mount namespaces.

Inside, the only network is loopback and a TUN device that is the default
route for IPv4 and IPv6. cloudguard reads that device: every TCP SYN and
UDP datagram to a non-loopback address is recorded to the reach log and
answered at once (reset / unreachable), every DNS query is answered by
cloudguard with a synthetic address per name, and the cloud credential
homes are masked by empty read-only mounts. Linux only; see docs/guard.md.

Modules, one job each: `requirements` (can namespaces be made here),
`linux` (unshare/mount system calls), `packets` (parse and answer IP
packets), `dns` (the resolver and its address pool), `attribution` (which
process sent a packet), `sink` (the loop that records and refuses),
`forward` (named host-loopback ports, relayed through unix sockets),
`masks` (credential homes), `supervisor` (runs inside the namespaces),
`launch` (the host side of `cloudguard run --hard`).
"""
