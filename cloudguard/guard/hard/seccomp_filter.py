"""The command's seccomp filter: the system calls the supervisor's gate answers (`gate`).

Installed by the command's init before the command starts (inherited by
every process of the run, never removable). It sends to the supervisor, as
a user notification (SECCOMP_RET_USER_NOTIF, Linux 5.0+), every call that
can reach past the network namespace or that names where a datagram goes:

- `connect` (any socket: a filter cannot read the address, and the gate
  makes the connection itself, so what it checked is what is connected);
- `sendto` with an address, `sendmsg`, `sendmmsg` (a datagram to a unix
  socket path; the sender of a short-lived UDP socket);
- `socket` and `socketpair` of a family the network namespace does not
  isolate (AF_VSOCK, Bluetooth, ...): everything but the allowed families;
- with read-only ambient roots (`Arch.watching`), the calls that write at a
  path: `open`/`openat` with a write flag, and every call of
  `syscalls.CALLS` (the gate records one into a root, `writes`).

`ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)` are refused (EPERM): each pushes
input into a terminal (the operator's shell, after the run). The command's
new session already keeps it from doing so on the operator's terminal
(`command_init`); the filter refuses it on any terminal, as defence in depth.
`io_uring_setup` is refused outright (EPERM): its operations connect and
send without system calls a filter sees. Calls of the 32-bit ABI (i386,
arm) to sockets are refused (EPERM): a 32-bit program gets no sockets
inside. x32 system calls are refused (ENOSYS). Stdlib only; the program is
assembled here, with its jumps resolved from labels.
"""

from __future__ import annotations

import ctypes
import errno
import socket
import struct

from cloudguard.guard.hard import linux, syscalls

SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV = 1 << 5  # 5.19+: a received call is not restarted
RET_KILL_PROCESS = 0x80000000
RET_ALLOW = 0x7FFF0000
RET_USER_NOTIF = 0x7FC00000
RET_ERRNO = 0x00050000
IO_URING_SETUP = 425  # the same number on every architecture
X32_SYSCALL_BIT = 0x40000000
# The ioctls that push input into a terminal: a faked keystroke (TIOCSTI), the console's
# selection pasted as input (TIOCLINUX). The request is an unsigned int: its low 32 bits.
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
TERMINAL_INPUT = (TIOCSTI, TIOCLINUX)
# Families a network namespace isolates, or that reach nothing outside the machine; every
# other one is denied and recorded (AF_VSOCK reaches the hypervisor's host, for one).
ALLOWED_FAMILIES = {
    socket.AF_UNIX: "AF_UNIX",
    socket.AF_INET: "AF_INET",
    socket.AF_INET6: "AF_INET6",
    16: "AF_NETLINK",
    17: "AF_PACKET",
    38: "AF_ALG",
}
# seccomp_data: nr (int), arch (u32), instruction pointer (u64), args[6] (u64)
NR, ARCH = 0, 4


def arg_low(index: int) -> int:
    return 16 + 8 * index


class Arch:
    """One architecture's system call numbers (native, and the 32-bit ABI beside it)."""

    def __init__(
        self,
        audit: int,
        calls: dict[str, int],
        compat_audit: int,
        compat_socket_calls: tuple[int, ...],
        x32: bool = False,
        compat_ioctl: int | None = None,
    ) -> None:
        self.audit, self.calls, self.x32 = audit, calls, x32
        self.compat_audit, self.compat_socket_calls = compat_audit, compat_socket_calls
        self.compat_ioctl = compat_ioctl
        self.writes: dict[str, int] = {}  # the write calls the gate judges (none by default)

    def watching(self, calls: dict[str, int]) -> Arch:
        """This architecture with the write calls `calls` sent to the gate too."""
        arch = Arch(
            self.audit,
            self.calls,
            self.compat_audit,
            self.compat_socket_calls,
            self.x32,
            self.compat_ioctl,
        )
        arch.writes = dict(calls)
        return arch


ARCHES = {
    "x86_64": Arch(
        0xC000003E,
        {"socket": 41, "socketpair": 53, "connect": 42, "sendto": 44, "sendmsg": 46,
         "sendmmsg": 307, "ioctl": 16},
        0x40000003,  # i386: socketcall, socket, socketpair, connect, sendto, sendmsg, sendmmsg
        (102, 359, 360, 362, 369, 370, 345, IO_URING_SETUP),
        x32=True,
        compat_ioctl=54,
    ),
    "aarch64": Arch(
        0xC00000B7,
        {"socket": 198, "socketpair": 199, "connect": 203, "sendto": 206, "sendmsg": 211,
         "sendmmsg": 269, "ioctl": 29},
        0x40000028,  # arm (EABI)
        (281, 288, 283, 290, 296, 374, IO_URING_SETUP),
        compat_ioctl=54,
    ),
}  # fmt: skip


def native(*, write_calls: bool = False) -> Arch | None:
    """This machine's architecture; with `write_calls`, watching the calls that write."""
    arch = ARCHES.get(linux.machine())
    if arch is None or not write_calls:
        return arch
    return arch.watching(syscalls.CALLS.get(linux.machine(), {}))


# -- a small assembler for classic BPF ---------------------------------------------------------

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06


class _Program:
    def __init__(self) -> None:
        self.code: list[tuple[int, int, str | int, str | int]] = []  # op, k, true, false
        self.labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, offset, 0, 0))

    def jump(self, op: int, k: int, true: str | int = 0, false: str | int = 0) -> None:
        self.code.append((op, k, true, false))

    def ret(self, value: int) -> None:
        self.code.append((_RET_K, value, 0, 0))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = b""
        for index, (op, k, true, false) in enumerate(self.code):
            offsets = [
                self.labels[t] - index - 1 if isinstance(t, str) else t for t in (true, false)
            ]
            assert all(0 <= o <= 255 for o in offsets), "a jump out of classic BPF's reach"
            out += struct.pack("=HBBI", op, offsets[0], offsets[1], k)
        return out


def program(arch: Arch) -> bytes:
    p = _Program()
    p.load(ARCH)
    p.jump(_JEQ_K, arch.audit, "native", 0)
    p.jump(_JEQ_K, arch.compat_audit, "compat", 0)
    p.ret(RET_KILL_PROCESS)  # an ABI this kernel does not run for this program
    p.label("compat")
    p.load(NR)
    for number in arch.compat_socket_calls:
        p.jump(_JEQ_K, number, "deny", 0)
    if arch.compat_ioctl is not None:
        p.jump(_JEQ_K, arch.compat_ioctl, "ioctl", 0)
    p.ret(RET_ALLOW)
    p.label("native")
    p.load(NR)
    if arch.x32:
        p.jump(_JGE_K, X32_SYSCALL_BIT, "nosys", 0)
    for name in ("connect", "sendmsg", "sendmmsg"):
        p.jump(_JEQ_K, arch.calls[name], "notify", 0)
    p.jump(_JEQ_K, arch.calls["sendto"], "sendto", 0)
    p.jump(_JEQ_K, arch.calls["socket"], "family", 0)
    p.jump(_JEQ_K, arch.calls["socketpair"], "family", 0)
    p.jump(_JEQ_K, IO_URING_SETUP, "deny", 0)
    p.jump(_JEQ_K, arch.calls["ioctl"], "ioctl", 0)
    for name, number in arch.writes.items():  # open/openat only when they would write
        flags = syscalls.FLAGS_ARGUMENT.get(name)
        p.jump(_JEQ_K, number, "notify" if flags is None else f"flags{flags}", 0)
    p.ret(RET_ALLOW)
    for index in sorted(set(syscalls.FLAGS_ARGUMENT.values())) if arch.writes else ():
        p.label(f"flags{index}")
        p.load(arg_low(index))
        p.jump(_JSET_K, syscalls.WRITE_FLAGS, "notify", "allow")
    p.label("sendto")  # with no address (a connected socket's send) it is allowed
    p.load(arg_low(4))
    p.jump(_JEQ_K, 0, 0, "notify")
    p.load(arg_low(4) + 4)
    p.jump(_JEQ_K, 0, "allow", "notify")
    p.label("ioctl")  # into a terminal's input: refused
    p.load(arg_low(1))
    for request in TERMINAL_INPUT:
        p.jump(_JEQ_K, request, "deny", 0)
    p.ret(RET_ALLOW)
    p.label("family")
    p.load(arg_low(0))
    for family in ALLOWED_FAMILIES:
        p.jump(_JEQ_K, family, "allow", 0)
    p.label("notify")
    p.ret(RET_USER_NOTIF)
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("deny")
    p.ret(RET_ERRNO | errno.EPERM)
    p.label("nosys")
    p.ret(RET_ERRNO | errno.ENOSYS)
    return p.assemble()


def install(arch: Arch) -> int:
    """Install the filter on this process (and its future children); the listener descriptor.

    Needs CAP_SYS_ADMIN in the process's user namespace (the init has it) or no_new_privs.
    """
    assembled = program(arch)
    code = ctypes.create_string_buffer(assembled, len(assembled))
    fprog = ctypes.create_string_buffer(
        struct.pack("=HxxxxxxQ", len(assembled) // 8, ctypes.addressof(code))
    )
    flags = SECCOMP_FILTER_FLAG_NEW_LISTENER
    try:
        killable = flags | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
        return linux.seccomp(SECCOMP_SET_MODE_FILTER, killable, fprog)
    except OSError as error:
        if error.errno != errno.EINVAL:  # before 5.19 the flag is unknown: without it
            raise
    return linux.seccomp(SECCOMP_SET_MODE_FILTER, flags, fprog)
