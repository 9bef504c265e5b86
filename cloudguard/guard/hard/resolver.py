"""Where lookups inside the seal go: the host's resolver layout, and the sink's listeners.

Every layout a host uses must end at the sink:

- a plain `/etc/resolv.conf`: the seal's own file is bound over it;
- a symlink (systemd-resolved's `../run/systemd/resolve/stub-resolv.conf` or
  uplink `resolv.conf`, resolvconf's `/run/resolvconf/resolv.conf`,
  NetworkManager's): bound over the file the link ends at. Mounting onto a
  link mounts onto its target, so when that target lies in a directory the
  seal masks (`/run/systemd/resolve`: resolved's varlink socket), the mask
  is made first and the seal's file is bound into it, never the other way
  round (a mask made afterwards hides the bind: lookups found no file);
- no file, or a dangling link: the C library (glibc, musl) and Go ask
  127.0.0.1:53 and [::1]:53, where the sink listens too;
- nscd, nss-resolve, avahi: their sockets are masked (`masks`), so the C
  library falls through to DNS.

The sink answers UDP and TCP (`options use-vc`, a retry after a truncated
answer) on each address. After the mounts the supervisor resolves a probe
name as the command would (`Sink.probe`); a lookup that does not arrive is
a setup error naming this layout (75), never a silent gap.
"""

from __future__ import annotations

import os
import socket

RESOLV_CONF = "/etc/resolv.conf"
NSSWITCH = "/etc/nsswitch.conf"
RESOLVER = ("127.0.0.53", 53)  # what the seal's resolv.conf names
DEFAULTS = (("127.0.0.1", 53), ("::1", 53))  # what the C library asks without a resolv.conf
CONF = f"nameserver {RESOLVER[0]}\noptions attempts:1\n"
RECEIVE_BUFFER = 8 << 20  # bytes per UDP listener (forced: the supervisor owns the namespace)
SO_RCVBUFFORCE = 33
KNOWN_TARGETS = (
    ("/run/systemd/resolve/stub-resolv.conf", "systemd-resolved's stub"),
    ("/run/systemd/resolve/resolv.conf", "systemd-resolved's uplink list"),
    ("/run/resolvconf/", "resolvconf"),
    ("/run/NetworkManager/", "NetworkManager"),
)


class Layout:
    """How this host's C library finds its resolver, read before any mount is made."""

    def __init__(self, links: list[str], target: str | None, hosts: str) -> None:
        self.links = links  # each link's text, in order
        self.target = target  # the existing file the C library reads; None: it asks 127.0.0.1
        self.hosts = hosts  # nsswitch.conf's `hosts:` line

    def describe(self) -> str:
        if not self.links:
            where = f"{RESOLV_CONF} is a plain file" if self.target else f"no {RESOLV_CONF}"
        else:
            chain = " -> ".join([RESOLV_CONF, *self.links])
            if self.target is None:
                where = f"{chain} (dangling)"
            else:
                known = [name for prefix, name in KNOWN_TARGETS if self.target.startswith(prefix)]
                where = f"{chain}" + (f" ({known[0]})" if known else "")
        return f"{where}; nsswitch {self.hosts or 'hosts: (none)'}"


def read_layout() -> Layout:
    links: list[str] = []
    path = RESOLV_CONF
    while os.path.islink(path) and len(links) < 16:
        text = os.readlink(path)
        links.append(text)
        path = os.path.join(os.path.dirname(path), text)
    target = os.path.realpath(RESOLV_CONF) if os.path.isfile(RESOLV_CONF) else None
    return Layout(links, target, _hosts_line())


def _hosts_line() -> str:
    try:
        with open(NSSWITCH, encoding="utf-8", errors="replace") as handle:
            lines = [line.split("#")[0].strip() for line in handle]
    except OSError:
        return ""
    return next((" ".join(line.split()) for line in lines if line.startswith("hosts:")), "")


class Listeners:
    """The sink's resolver sockets: UDP and TCP on each address a lookup may be sent to."""

    def __init__(self, ipv6: bool) -> None:
        addresses = [RESOLVER, DEFAULTS[0], *([DEFAULTS[1]] if ipv6 else [])]
        self.udp: list[socket.socket] = []
        self.tcp: list[socket.socket] = []
        for host, port in addresses:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            udp = socket.socket(family, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            try:  # a burst of queries queues here while the sink records the ones before
                udp.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
            except OSError:
                udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
            udp.bind((host, port))
            udp.setblocking(False)
            tcp = socket.socket(family, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind((host, port))
            tcp.listen(socket.SOMAXCONN)
            tcp.setblocking(False)
            self.udp.append(udp)
            self.tcp.append(tcp)

    def close(self) -> None:
        for listener in (*self.udp, *self.tcp):
            listener.close()
