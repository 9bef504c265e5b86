"""The calls that write at a path: their layout and numbers, for the filter and the judge.

The seccomp filter (`seccomp_filter`) sends these calls to the gate, and the
write judge (`writes`) reads their path arguments: both read the one table
here, so a call the filter sends is a call the judge knows how to read.
Stdlib only, and data only.
"""

from __future__ import annotations

# open/openat write when any of these is in their flags (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC;
# the same values on every architecture the filter knows). O_TMPFILE needs O_WRONLY/O_RDWR.
WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000

# name -> (what it does to a path, [(directory descriptor argument or None, path argument)]).
LAYOUT: dict[str, tuple[str, tuple[tuple[int | None, int], ...]]] = {
    "open": ("open for writing", ((None, 0),)),
    "creat": ("open for writing", ((None, 0),)),
    "openat": ("open for writing", ((0, 1),)),
    "openat2": ("open for writing", ((0, 1),)),
    "truncate": ("truncate", ((None, 0),)),
    "mkdir": ("mkdir", ((None, 0),)),
    "mkdirat": ("mkdir", ((0, 1),)),
    "rmdir": ("rmdir", ((None, 0),)),
    "mknod": ("mknod", ((None, 0),)),
    "mknodat": ("mknod", ((0, 1),)),
    "unlink": ("unlink", ((None, 0),)),
    "unlinkat": ("unlink", ((0, 1),)),
    "rename": ("rename", ((None, 0), (None, 1))),
    "renameat": ("rename", ((0, 1), (2, 3))),
    "renameat2": ("rename", ((0, 1), (2, 3))),
    "link": ("link", ((None, 0), (None, 1))),
    "linkat": ("link", ((0, 1), (2, 3))),
    "symlink": ("symlink", ((None, 1),)),
    "symlinkat": ("symlink", ((1, 2),)),
    "chmod": ("chmod", ((None, 0),)),
    "fchmodat": ("chmod", ((0, 1),)),
    "fchmodat2": ("chmod", ((0, 1),)),
    "chown": ("chown", ((None, 0),)),
    "lchown": ("chown", ((None, 0),)),
    "fchownat": ("chown", ((0, 1),)),
    "utime": ("set times", ((None, 0),)),
    "utimes": ("set times", ((None, 0),)),
    "futimesat": ("set times", ((0, 1),)),
    "utimensat": ("set times", ((0, 1),)),
    "setxattr": ("set an attribute", ((None, 0),)),
    "lsetxattr": ("set an attribute", ((None, 0),)),
    "removexattr": ("remove an attribute", ((None, 0),)),
    "lremovexattr": ("remove an attribute", ((None, 0),)),
}
# The calls' numbers, per architecture (x86_64: arch/x86/entry/syscalls/syscall_64.tbl;
# aarch64: include/uapi/asm-generic/unistd.h, which has only the *at forms).
CALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "open": 2, "creat": 85, "openat": 257, "openat2": 437, "truncate": 76, "mkdir": 83,
        "mkdirat": 258, "rmdir": 84, "mknod": 133, "mknodat": 259, "unlink": 87,
        "unlinkat": 263, "rename": 82, "renameat": 264, "renameat2": 316, "link": 86,
        "linkat": 265, "symlink": 88, "symlinkat": 266, "chmod": 90, "fchmodat": 268,
        "fchmodat2": 452, "chown": 92, "lchown": 94, "fchownat": 260, "utime": 132,
        "utimes": 235, "futimesat": 261, "utimensat": 280, "setxattr": 188, "lsetxattr": 189,
        "removexattr": 197, "lremovexattr": 198,
    },
    "aarch64": {
        "openat": 56, "openat2": 437, "truncate": 45, "mkdirat": 34, "mknodat": 33,
        "unlinkat": 35, "renameat": 38, "renameat2": 276, "linkat": 37, "symlinkat": 36,
        "fchmodat": 53, "fchmodat2": 452, "fchownat": 54, "utimensat": 88, "setxattr": 5,
        "lsetxattr": 6, "removexattr": 14, "lremovexattr": 15,
    },
}  # fmt: skip
# The calls that write only with a write flag: name -> the argument holding the flags.
FLAGS_ARGUMENT = {"open": 1, "openat": 2}
