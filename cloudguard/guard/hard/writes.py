"""Under the hard seal, a write into an ambient root is refused where it happens, and recorded.

Inside the seal every ambient root that exists is read-only (a read-only bind
of itself; a masked credential home is an empty read-only tmpfs), so the
kernel refuses a write there with EROFS whatever the program is. A read-only
mount leaves no trace of the attempt, though, so the calls that write at a
path also go to the gate (`gate`, through its seccomp filter): `open` and
`openat` with a write flag, `creat`, `openat2`, and every call that creates,
removes, renames, links, truncates or changes the attributes of a path
(`syscalls.CALLS`). For each the gate reads the path from the caller's memory and
resolves it as the kernel would (in the caller's root, working directory or
directory descriptor; the last component followed when it is a symlink); a
path under a root, outside the declared outputs, is recorded at once
(`ambient-write`, naming the path, the call, the caller's pid, argv and test,
`found: at the attempt`) and refused (EROFS). Any other call goes on as made.

The mount is what refuses: the gate's look is a second, racy one (a thread
may rewrite the path between the look and the call), so what it can miss is
the record, never the refusal. A root that does not exist yet cannot be
mounted over without changing the host: there the gate's EROFS is the only
refusal, and what gets past it (the race) is found after the run
(`cloudguard.guard.witness`). Not seen by the gate, refused by the mount all
the same: io_uring (the filter denies it outright), the 32-bit ABI's calls,
and a write through a descriptor opened before the run.

Stdlib only: the gate runs in the supervisor.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence

from cloudguard.guard import reach
from cloudguard.guard.hard import attribution
from cloudguard.guard.hard.syscalls import CALLS, LAYOUT, WRITE_FLAGS
from cloudguard.guard.roots import under

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cloudguard.guard.hard.gate import Call, Target
    from cloudguard.guard.hard.relay import Relay

AT_FDCWD = -100
PATH_MAX = 4096
Answer = Callable[..., None]  # the gate's answer: (call, error=..., go_on=...)


class Writes:
    """The gate's judge of the calls that write at a path."""

    def __init__(
        self,
        roots: Sequence[tuple[str, str]],
        outputs: Sequence[str],
        *,
        relay: Relay,
        seal_root: str,
    ) -> None:
        self.roots = [(os.path.realpath(path), entry) for path, entry in roots]
        self.outputs = [os.path.realpath(path) for path in outputs]
        self.relay, self.seal_root = relay, seal_root
        self._recorded: set[tuple[str, str]] = set()  # (path, test): the first attempt says it

    def handlers(self, arch: str, answer: Answer) -> dict[int, Callable[[Call, Target], None]]:
        """The gate's handler for each write call of `arch`."""
        names = {number: name for name, number in CALLS.get(arch, {}).items()}
        return {number: self._handler(name, answer) for number, name in names.items()}

    def _handler(self, name: str, answer: Answer) -> Callable[[Call, Target], None]:
        what, paths = LAYOUT[name]

        def judge(call: Call, target: Target) -> None:
            if name == "openat2" and not _openat2_writes(call, target):
                answer(call, go_on=True)
                return
            for directory, argument in paths:
                where = _resolve(call, target, directory, argument)
                found = self._root_of(where) if where else None
                if where and found:
                    self._record(target, where, what, found)
                    answer(call, error=errno.EROFS)
                    return
            answer(call, go_on=True)

        return judge

    def _root_of(self, path: str) -> str | None:
        if any(under(path, output) for output in self.outputs):
            return None
        return next((entry for root, entry in self.roots if under(path, root)), None)

    def _record(self, target: Target, path: str, what: str, root: str) -> None:
        sender = attribution.describe(target.process, self.seal_root)
        key = (path, sender.test)
        if key in self._recorded:
            return  # the same path again in the same test (touch: open, then utimensat)
        self._recorded.add(key)
        extra: dict[str, object] = {"change": f"{what}, refused", "root": root}
        extra["found"] = "at the attempt"
        self.relay.record(attribution.reach_entry(reach.AMBIENT_WRITE, path, sender, extra))


def _openat2_writes(call: Call, target: Target) -> bool:
    """openat2's flags are in its `struct open_how` (first field, 64 bits)."""
    how = target.read(call.args[2], 8)
    return bool(int.from_bytes(how, "little") & WRITE_FLAGS)


def _read_path(target: Target, address: int) -> bytes | None:
    """A NUL-terminated path from the caller's memory, read a page at a time (the string may
    end just before an unmapped page); None for a null pointer or an unreadable one."""
    if not address:
        return None
    found = b""
    while len(found) < PATH_MAX:
        chunk = 4096 - (address + len(found)) % 4096
        try:
            data = target.read(address + len(found), chunk)
        except OSError:
            return None
        end = data.find(b"\0")
        if end >= 0:
            return found + data[:end]
        found += data
    return None


def _resolve(call: Call, target: Target, directory: int | None, argument: int) -> str | None:
    """The absolute path a call's path argument names for the caller, as the supervisor sees
    it: the deepest existing directory on the way resolved for real (symlinks followed), the
    rest appended; the whole followed when it exists. None when it cannot be told."""
    raw = _read_path(target, call.args[argument])
    base = _base(call, target, directory)
    if base is None or (raw is None and directory is None):
        return None
    try:
        if not raw:  # a null or empty path with a descriptor: the call acts on the descriptor
            return os.readlink(f"/proc/self/fd/{base}")
        return _real(base, raw)
    except OSError:
        return None
    finally:
        os.close(base)


def _base(call: Call, target: Target, directory: int | None) -> int | None:
    """Where a relative path starts for the caller: its directory descriptor or working
    directory (an absolute one starts at its root, `_real` handles it)."""
    dirfd = AT_FDCWD if directory is None else _signed(call.args[directory])
    try:
        if dirfd == AT_FDCWD:
            return os.open(f"/proc/{target.call.pid}/cwd", os.O_PATH | os.O_CLOEXEC)
        return target.descriptor(dirfd)
    except OSError:
        return None


def _real(base: int, raw: bytes) -> str:
    """`raw` resolved from the descriptor `base` (or from the root for an absolute path)."""
    path = os.fsdecode(raw)
    start = "/" if path.startswith("/") else os.readlink(f"/proc/self/fd/{base}")
    joined = os.path.normpath(os.path.join(start, path))
    existing, rest = joined, ""
    while not os.path.lexists(existing) and existing != "/":
        existing, name = os.path.split(existing)
        rest = os.path.join(name, rest) if rest else name
    real = os.path.realpath(existing)
    return os.path.join(real, rest) if rest else real


def _signed(value: int) -> int:
    """A descriptor argument as the kernel reads it (an int: AT_FDCWD is negative)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value
