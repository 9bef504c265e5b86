"""The gate: the supervisor's answer to each system call the command's seccomp filter sends it.

Why: a unix socket file crosses network namespaces. A host daemon's socket
(docker, the user's D-Bus, an SSH agent, X11) reachable by path is a door
the TUN device never sees; so is a socket family the network namespace does
not isolate (AF_VSOCK reaches the hypervisor's host). The filter
(`seccomp_filter`) hands those calls here, the caller blocked until the
gate answers:

- `connect`: the gate makes the connection itself, on the caller's own
  socket (a duplicate, `pidfd_getfd`) with the address it read once from the
  caller's memory. A socket path is opened first (O_PATH, resolved in the
  caller's root and working directory) and connected through that
  descriptor, so the socket checked is the socket connected: a path or a
  descriptor swapped by another thread meanwhile changes nothing. A socket
  bound inside the seal (listed by the namespace's `sock_diag`) or named by
  `--allow-unix` is connected; any other is a host socket: recorded
  (`hard-unix`) and refused (EACCES). A caller that waits for a TCP
  connection to where the sink answers at once (an outside address, or the
  resolver's port) has it begun without blocking and answered from the
  gate's own loop; any other connection it waits for, a worker thread makes.
- `sendto`/`sendmsg`/`sendmmsg` with an address: a datagram to a host
  unix socket is recorded and refused the same way; a send (or a connect)
  to an address the sink records, outside loopback or the sink's resolver,
  has its sender described now (it may exit before the sink reads its
  packet) and the call goes on (`Flows`).
- `socket`/`socketpair` of a family the filter does not allow: recorded
  (`hard-socket`, the family named) and refused (EAFNOSUPPORT);
- a call that writes at a path (only when the run has read-only ambient
  roots): judged by `writes.Writes`, recorded (`ambient-write`) and refused
  (EROFS) when the path is in a root.

Record, then refuse, as the sink does: the record is relayed to the host's
keeper before the caller is answered. A gate that fails answers EACCES and
reports tampering (the run is 97), never lets the call through unjudged.
One residual race is named in docs/guard.md: a datagram to a unix socket
*inside* the seal goes on as the caller asked (the kernel reads its address
again), so a second thread rewriting that address meanwhile could aim it at a
host datagram socket.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import queue
import select
import socket
import stat
import struct
import threading
from collections.abc import Callable

from cloudguard.guard.hard import attribution, diag, linux, seccomp_filter
from cloudguard.guard.hard.relay import Relay

TYPE_CHECKING = False  # typing costs start-up time in the supervisor; mypy reads this by name
if TYPE_CHECKING:
    from typing import Protocol

    class Judge(Protocol):
        """A judge of further calls (`writes.Writes`): its handler of each call, by number.

        A protocol, not the class: the judge reads the gate's `Call` and `Target`, and the
        gate imports nothing of it.
        """

        def handlers(
            self, arch: str, answer: Callable[..., None]
        ) -> dict[int, Callable[[Call, Target], None]]: ...


NOTIF_RECV = 0xC0502100  # SECCOMP_IOCTL_NOTIF_RECV (struct seccomp_notif, 80 bytes)
NOTIF_SEND = 0xC0182101  # SECCOMP_IOCTL_NOTIF_SEND (struct seccomp_notif_resp, 24 bytes)
NOTIF_ID_VALID = 0x40082102
FLAG_CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE: the call goes on as made
_NOTIF = struct.Struct("=QIIiIQ6Q")
_RESPONSE = struct.Struct("=QqiI")
_MSGHDR = struct.Struct("=QI4xQQQQi4x")  # name, namelen, iov, iovlen, control, controllen, flags
_MMSGHDR = 64  # a msghdr and its msg_len, padded
MAX_ADDRESS = 128  # sizeof(struct sockaddr_storage): the kernel refuses a longer one (EINVAL)
MAX_MESSAGES = 1024  # UIO_MAXIOV: sendmmsg sends no more in one call
RESOLVER_PORT = 53  # the sink's resolver listens on loopback: its queries are records too
BLOCKING_CONNECTS = 64  # connections made at once for callers that wait (blocking sockets)


class Call:
    __slots__ = ("args", "id", "nr", "pid")

    def __init__(self, raw: bytes) -> None:
        self.id, self.pid, _, self.nr, _, _, *self.args = _NOTIF.unpack(raw)


class Target:
    """The calling process, while it waits: its descriptors, memory, root and cwd.

    The call names the calling *thread*; descriptors belong to its process (the thread
    group), which is what a record names too.
    """

    def __init__(self, call: Call, listener: int) -> None:
        self.call, self.listener = call, listener
        self.process, self.pidfd = _process_of(call.pid)
        self._memory: int | None = None
        self.pending()  # the pid named the caller when it was opened (no reused pid)

    def pending(self) -> None:
        fcntl.ioctl(self.listener, NOTIF_ID_VALID, struct.pack("=Q", self.call.id))

    def read(self, address: int, length: int) -> bytes:
        if self._memory is None:
            self._memory = os.open(f"/proc/{self.call.pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
            self.pending()
        data = os.pread(self._memory, length, address) if length else b""
        if len(data) != length:
            raise OSError(errno.EFAULT, "the caller's memory could not be read")
        return data

    def descriptor(self, number: int) -> int:
        return linux.pidfd_getfd(self.pidfd, number)

    def open_path(self, path: bytes) -> int:
        """The file a socket path names for the caller (O_PATH), resolved in its root / cwd."""
        absolute = path.startswith(b"/")
        where = f"/proc/{self.call.pid}/{'root' if absolute else 'cwd'}"
        base = os.open(where, os.O_PATH | os.O_CLOEXEC)
        try:
            self.pending()
            if absolute:
                return linux.open_in_root(base, path.lstrip(b"/") or b".", os.O_PATH)
            return os.open(path, os.O_PATH | os.O_CLOEXEC, dir_fd=base)
        finally:
            os.close(base)

    def close(self) -> None:
        os.close(self.pidfd)
        if self._memory is not None:
            os.close(self._memory)


def _process_of(tid: int) -> tuple[int, int]:
    """The process (thread group) of the thread `tid`, and a pidfd of it. A pidfd opens only
    for a thread group's leader (any other thread: EINVAL, or ENOENT on newer kernels): most
    callers are one, and are named without reading /proc/TID/status. Any refusal falls back
    to the status, which says the thread group (or that the thread is gone)."""
    try:
        return tid, os.pidfd_open(tid)
    except OSError:
        pass
    process = _thread_group(tid)
    return process, os.pidfd_open(process)


def _thread_group(tid: int) -> int:
    with open(f"/proc/{tid}/status", "rb") as status:
        for line in status:
            if line.startswith(b"Tgid:"):
                return int(line.split()[1])
    raise OSError(errno.ESRCH, f"no thread group for {tid}")


def _unix_path(address: bytes) -> bytes | None:
    """The path of an AF_UNIX address; None for an abstract or unnamed one."""
    if len(address) > 2 and struct.unpack_from("=H", address)[0] == socket.AF_UNIX:
        path = address[2:].split(b"\0", 1)[0]
        return path if address[2] != 0 and path else None
    return None


def _recorded_destination(address: bytes) -> tuple[str, int] | None:
    """An AF_INET/AF_INET6 address the sink records a packet to, as (host, port): outside
    loopback, or the resolver's port 53 on it. None for anything else."""
    family = struct.unpack_from("=H", address)[0] if len(address) >= 2 else 0
    if family == socket.AF_INET and len(address) >= 16:
        host = socket.inet_ntop(socket.AF_INET, address[4:8])
    elif family == socket.AF_INET6 and len(address) >= 24:
        host = attribution.flow_address(socket.inet_ntop(socket.AF_INET6, address[8:24]))
    else:
        return None
    port = struct.unpack_from("!H", address, 2)[0]
    loopback = host == "::1" or host.startswith("127.")
    return None if loopback and port != RESOLVER_PORT else (host, port)


def _socket_of(target: Target, number: int) -> socket.socket:
    """The caller's descriptor `number` as a socket of the gate's own (ENOTSOCK if it is none)."""
    fd = target.descriptor(number)
    try:
        return socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        raise


class _Workers:
    """Threads that make the connections their callers wait for, but the ones the gate's loop
    finishes itself (`Gate._begin`): a thread started per connect would cost a handover of the
    interpreter's lock. At most `limit` of them; past that a connection waits for one."""

    def __init__(self, work: Callable[[_Connection], None], limit: int) -> None:
        self._work, self._limit = work, limit
        self._queue: queue.SimpleQueue[_Connection] = queue.SimpleQueue()
        self._idle = 0
        self._started = 0
        self._lock = threading.Lock()

    def put(self, job: _Connection) -> None:
        with self._lock:
            start = self._idle == 0 and self._started < self._limit
            if start:
                self._started += 1
            else:
                self._idle -= 1 if self._idle else 0
        self._queue.put(job)
        if start:
            threading.Thread(target=self._serve, name="cloudguard-gate-worker", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job = self._queue.get()
            self._work(job)
            with self._lock:
                self._idle += 1


class _Connection:
    """A connect the gate makes for its caller: the caller's socket, the checked address."""

    __slots__ = ("address", "call", "destination", "pin", "process", "sender", "view")

    def __init__(
        self,
        call: Call,
        view: socket.socket,
        pin: int,
        address: bytes,
        destination: tuple[str, int] | None,
        sender: attribution.Sender | None,
        process: int,
    ) -> None:
        self.call, self.view, self.pin, self.address = call, view, pin, address
        self.destination, self.sender, self.process = destination, sender, process

    def close(self) -> None:
        self.view.close()
        if self.pin >= 0:
            os.close(self.pin)


def _family_name(family: int) -> str:
    names = {int(f): f.name for f in socket.AddressFamily}
    return names.get(family, "AF_VSOCK" if family == 40 else f"address family {family}")


class Gate:
    def __init__(
        self,
        listener: int,
        arch: seccomp_filter.Arch,
        *,
        relay: Relay,
        flows: attribution.Flows,
        allowed: frozenset[tuple[int, int, int]],
        seal_root: str,
        writes: Judge | None = None,
    ) -> None:
        self.listener, self.relay, self.flows = listener, relay, flows
        self.allowed = allowed  # (major, minor, inode) of each --allow-unix socket
        self.seal_root = seal_root
        calls = arch.calls
        self.handlers: dict[int, Callable[[Call, Target], None]] = {
            calls["connect"]: self._connect,
            calls["sendto"]: self._send,
            calls["sendmsg"]: self._send,
            calls["sendmmsg"]: self._send,
            calls["socket"]: self._family,
            calls["socketpair"]: self._family,
        }
        if writes is not None:
            self.handlers.update(writes.handlers(linux.machine(), self._answer))
        self._sendto, self._sendmsg = calls["sendto"], calls["sendmsg"]
        self._workers = _Workers(self._make, BLOCKING_CONNECTS)
        self._poller = select.poll()  # the gate's thread alone: the listener, the stop pipe and
        self._connecting: dict[int, tuple[_Connection, int]] = {}  # what `_begin` left in flight
        self._stop_read, self._stop_write = os.pipe2(os.O_CLOEXEC)
        self._thread = threading.Thread(target=self._serve, name="cloudguard-gate", daemon=True)
        flows.described = True

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop answering; calls still waiting then fail (ENOSYS) as the listener closes."""
        os.write(self._stop_write, b"x")
        self._thread.join()
        for fd in (self.listener, self._stop_read, self._stop_write):
            os.close(fd)

    # -- the loop ---------------------------------------------------------------------------

    def _serve(self) -> None:
        poller = self._poller
        poller.register(self.listener, select.POLLIN)
        poller.register(self._stop_read, select.POLLIN)
        while True:
            for fd, events in poller.poll():
                if fd == self._stop_read:
                    return
                if fd in self._connecting:
                    self._completed(fd)
                elif events & select.POLLIN:
                    self._receive()
                elif events & (select.POLLHUP | select.POLLERR):
                    return  # no process is left under the filter

    def _receive(self) -> None:
        raw = bytearray(_NOTIF.size)
        try:
            fcntl.ioctl(self.listener, NOTIF_RECV, raw)
        except OSError:
            return  # the caller was killed before it could be read: nothing to answer
        call = Call(bytes(raw))
        try:
            target = Target(call, self.listener)
        except OSError as error:  # gone meanwhile (the answer then goes nowhere), or unreadable
            if error.errno not in (errno.ENOENT, errno.ESRCH):
                self.relay.tamper(f"the hard seal's gate could not read a caller ({error})")
            self._answer(call, error=errno.EACCES)
            return
        try:
            self.handlers[call.nr](call, target)
        except OSError as error:  # the kernel would have said the same (EBADF, EFAULT, ENOENT)
            self._answer(call, error=error.errno or errno.EACCES)
        except Exception as error:  # a gate that fails refuses, and the run fails closed
            self.relay.tamper(f"the hard seal's gate failed ({error!r}): a call was refused")
            self._answer(call, error=errno.EACCES)
        finally:
            target.close()

    def _answer(self, call: Call, *, error: int = 0, go_on: bool = False) -> None:
        response = bytearray(_RESPONSE.pack(call.id, 0, -error, FLAG_CONTINUE if go_on else 0))
        with contextlib.suppress(OSError):  # the caller was killed while it waited
            fcntl.ioctl(self.listener, NOTIF_SEND, response)

    def _record(self, via: str, target: Target, shown: str, extra: dict[str, object]) -> None:
        sender = attribution.describe(target.process, self.seal_root)
        self.relay.record(attribution.reach_entry(via, shown, sender, extra))

    # -- the calls --------------------------------------------------------------------------

    def _family(self, call: Call, target: Target) -> None:
        family = call.args[0] & 0xFFFFFFFF
        name = _family_name(family)
        self._record("hard-socket", target, name, {"protocol": name, "family": family})
        self._answer(call, error=errno.EAFNOSUPPORT)

    def _refused_unix(self, call: Call, target: Target, path: bytes, pin: int) -> bool:
        """Record and refuse a host unix socket; False when the socket may be used."""
        status = os.fstat(pin)
        if not stat.S_ISSOCK(status.st_mode):
            self._answer(call, error=errno.ECONNREFUSED)  # what the kernel says of a non-socket
            return True
        key = (os.major(status.st_dev), os.minor(status.st_dev), status.st_ino)
        if key in self.allowed or key in diag.bound_unix_sockets():
            return False
        shown = path.decode("utf-8", "backslashreplace")
        self._record("hard-unix", target, shown, {"protocol": "unix", "address": shown})
        self._answer(call, error=errno.EACCES)
        return True

    def _connect(self, call: Call, target: Target) -> None:
        fd_number, address_at, length = call.args[:3]
        if length > MAX_ADDRESS:
            self._answer(call, error=errno.EINVAL)
            return
        address = target.read(address_at, length)
        view: socket.socket | None = _socket_of(target, fd_number)
        pin = -1
        try:
            assert view is not None
            path = _unix_path(address) if view.family == socket.AF_UNIX else None
            if path is not None:
                pin = target.open_path(path)
                if self._refused_unix(call, target, path, pin):
                    return
                address = struct.pack("=H", socket.AF_UNIX) + f"/proc/self/fd/{pin}\0".encode()
            inet = view.family in (socket.AF_INET, socket.AF_INET6)
            destination = _recorded_destination(address) if inet else None
            waits = os.get_blocking(view.fileno())
            # A caller that waits for its TCP connection is still there when the sink reads its
            # SYN (the refusal comes after the record): only a UDP socket (whose datagrams come
            # later, unjudged) or a caller that does not wait may be gone by then.
            gone_by_then = view.type == socket.SOCK_DGRAM or not waits
            sender = None
            if destination and gone_by_then:
                sender = attribution.describe(target.process, self.seal_root)
            job = _Connection(call, view, pin, address, destination, sender, target.process)
            view, pin = None, -1  # the connection owns them now
            if waits and destination and sender is None:  # a SYN the sink answers at once
                self._begin(job)
            elif waits:  # the caller waits for the connection: so does a worker, not the gate
                self._workers.put(job)
            else:
                self._make(job)
        finally:
            if view is not None:
                view.close()
            if pin >= 0:
                os.close(pin)

    def _make(self, job: _Connection) -> None:
        """Connect for the caller and answer it, whatever else fails (an unanswered caller would
        wait for ever)."""
        error = errno.EACCES
        try:
            error = linux.connect(job.view.fileno(), job.address)
            if job.destination and job.sender is not None:
                port = job.view.getsockname()[1]
                self.flows.remember(job.view.proto, port, job.destination, job.sender)
        except Exception as failure:  # the record of who sent is best effort; the answer is not
            self.relay.tamper(f"the hard seal's gate failed after a connect ({failure!r})")
        finally:
            self._answer(job.call, error=error)
            job.close()

    def _begin(self, job: _Connection) -> None:
        """A waiting caller's TCP connection to where the sink answers at once (a SYN it
        records, then resets; the resolver's port): begun here without blocking, on the
        caller's socket made non-blocking for this one call, and answered from the gate's loop
        when it completes (`_completed`). No worker thread is woken for it, twice a refusal,
        each time for the interpreter's lock. While it connects, the socket names its caller
        to the sink, which need not search every process's descriptors for the SYN's sender."""
        fd, error, inode = job.view.fileno(), errno.EACCES, 0
        try:
            inode = os.fstat(fd).st_ino
            self.flows.connecting(inode, job.process)  # named by its socket while it connects
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            try:
                error = linux.connect(fd, job.address)
            finally:
                fcntl.fcntl(fd, fcntl.F_SETFL, flags)  # the caller's socket blocks again
            if error == errno.EINPROGRESS:
                self._poller.register(fd, select.POLLOUT)
                self._connecting[fd] = (job, inode)
                return
        except Exception as failure:  # the record of who sent is best effort; the answer is not
            self.relay.tamper(f"the hard seal's gate failed at a connect ({failure!r})")
            error = errno.EACCES
        self._finish(job, inode, error)

    def _completed(self, fd: int) -> None:
        """A connection `_begin` left in flight completed (or failed): its caller's answer."""
        job, inode = self._connecting.pop(fd)
        error = errno.EACCES
        try:
            self._poller.unregister(fd)
            error = job.view.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        except Exception as failure:
            self.relay.tamper(f"the hard seal's gate failed after a connect ({failure!r})")
        self._finish(job, inode, error)

    def _finish(self, job: _Connection, inode: int, error: int) -> None:
        try:
            if inode:
                self.flows.connected(inode)
            self._answer(job.call, error=error)
        finally:
            job.close()

    def _send(self, call: Call, target: Target) -> None:
        names = self._addresses(call, target)
        if not names:
            self._answer(call, go_on=True)  # a connected socket's send: already judged
            return
        with _socket_of(target, call.args[0]) as view:
            if view.family == socket.AF_UNIX:
                for address in names:
                    path = _unix_path(address)
                    if path is not None and self._unix_send_refused(call, target, path):
                        return
            elif view.family in (socket.AF_INET, socket.AF_INET6):
                self._describe_flows(target, view, names)
        self._answer(call, go_on=True)

    def _unix_send_refused(self, call: Call, target: Target, path: bytes) -> bool:
        pin = target.open_path(path)
        try:
            return self._refused_unix(call, target, path, pin)
        finally:
            os.close(pin)

    def _describe_flows(self, target: Target, view: socket.socket, names: list[bytes]) -> None:
        """Bind an unbound socket (as the send would) so its port is known, and remember who
        sends from it to each outside address."""
        destinations = [d for d in map(_recorded_destination, names) if d]
        if not destinations:
            return
        if view.getsockname()[1] == 0:
            view.bind(("::" if view.family == socket.AF_INET6 else "0.0.0.0", 0))
        port = view.getsockname()[1]
        new = [d for d in destinations if not self.flows.knows(view.proto, port, d)]
        if new:  # a socket sending again to where it sent before: described then
            sender = attribution.describe(target.process, self.seal_root)
            for destination in new:
                self.flows.remember(view.proto, port, destination, sender)

    def _addresses(self, call: Call, target: Target) -> list[bytes]:
        """The destination addresses a send names (none for a connected socket's send)."""
        if call.nr == self._sendto:
            address_at, length = call.args[4], call.args[5]
            return [target.read(address_at, min(length, MAX_ADDRESS))] if address_at else []
        headers = [call.args[1]]
        if call.nr != self._sendmsg:  # sendmmsg: an array of (msghdr, msg_len)
            count = min(call.args[2], MAX_MESSAGES)
            headers = [call.args[1] + i * _MMSGHDR for i in range(count)]
        names = []
        for header in headers:
            name_at, length = _MSGHDR.unpack(target.read(header, _MSGHDR.size))[:2]
            if name_at and length:
                names.append(target.read(name_at, min(length, MAX_ADDRESS)))
        return names
