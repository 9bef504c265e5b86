#!/usr/bin/env python3
"""Install and run cloudguard from a fresh clone with nothing but python3 and git.

    python3 dev.py demo     # install, then run the embedded demo
    python3 dev.py test     # install, then lint, type-check and run the whole test suite
    python3 dev.py bench    # install, run benchmarks/, draw their charts (docs/benchmarks.md)
    python3 dev.py docs     # install, then build the mkdocs site (strict)

It installs a pinned `uv` into .venv-tools/ and the locked workspace
(uv.lock: the core, both adapters and the dev tools) into .venv/. Stdlib only.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

UV_VERSION = "0.13.8"
ROOT = Path(__file__).resolve().parent
TOOLS = ROOT / ".venv-tools"
VENV = ROOT / ".venv"


def run(*argv: str | Path, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(a) for a in argv), flush=True)
    return subprocess.call([str(a) for a in argv], cwd=ROOT, env=env)


def must(*argv: str | Path, env: dict[str, str] | None = None) -> None:
    code = run(*argv, env=env)
    if code:
        sys.exit(code)


def uv() -> Path:
    binary = TOOLS / "bin" / "uv"
    if not binary.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(TOOLS)
        must(TOOLS / "bin" / "python", "-m", "pip", "install", "--quiet", f"uv=={UV_VERSION}")
    return binary


def install() -> None:
    env = dict(os.environ, UV_PROJECT_ENVIRONMENT=str(VENV), UV_PYTHON_DOWNLOADS="never")
    # Every module compiled once, here: `uv sync` leaves none compiled, and a shell that sets
    # PYTHONDONTWRITEBYTECODE (these machines' do) has each interpreter compile what it imports
    # from source again, every time. The suite starts about a thousand (its workers, the
    # controls' runs, the CLIs its tests call): the SDKs alone cost 3.3 s more CPU a process
    # cold (docs/benchmarks.md, "the suite's time: bytecode"). The workspace's own packages
    # are installed editable, outside site-packages: compileall writes theirs (it writes
    # whatever that variable says; only stale files are compiled again).
    must(uv(), "sync", "--locked", "--all-packages", "--compile-bytecode",
         "--python", sys.executable, env=env)  # fmt: skip
    must(tool("python"), "-m", "compileall", "-q", "-j", "0", "cloudguard", "adapters", "tests")


# What the test suite needs from the system, beyond Python: a C compiler (the C-extension
# proof), headless Chromium (the HTML report), iproute2 and util-linux (the hard seal's tests),
# a PostgreSQL server (the history store's tests start a throwaway cluster of their own).
# Each test that needs one fails rather than skips without it, so `test` installs what is
# missing where it can (root on Debian: CI and these machines) and says what to install
# where it cannot.
SYSTEM_PACKAGES = {
    "cc": "gcc libc6-dev",
    "chromium": "chromium",
    "ip": "iproute2",
    "postgres": "postgresql",
}
# Debian installs PostgreSQL's server programs outside PATH, one directory per version.
PROGRAM_DIRS = {"postgres": "/usr/lib/postgresql/*/bin"}


def installed(command: str) -> bool:
    if shutil.which(command):
        return True
    pattern = PROGRAM_DIRS.get(command)
    return bool(pattern and glob.glob(os.path.join(pattern, command)))


def system_requirements() -> None:
    missing = [pkg for cmd, pkg in SYSTEM_PACKAGES.items() if not installed(cmd)]
    if not missing:
        return
    packages = " ".join(missing).split()
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        must("apt-get", "update", "-qq", env=env)
        must("apt-get", "install", "-y", "-qq", *packages, env=env)
        return
    sys.exit(f"dev.py test needs these system packages: {' '.join(packages)} (install them)")


def peer_wheels() -> None:
    """The coexistence test (tests/packaging/test_peer_install.py) installs a peer suite's
    locked wheels, and the extras its controls add, offline, as no test may reach the
    network: fetch every one of them into uv's cache now, before the suite runs (`uv sync`
    caches a wheel it installs, but not the index page an offline `uv pip install` resolves
    a pin from)."""
    with tempfile.TemporaryDirectory() as scratch:
        must(uv(), "venv", "--quiet", "--python", sys.executable, scratch)
        python = Path(scratch) / "bin" / "python"
        for pins in ("peer-pins.txt", "offline-extras.txt"):
            listed = ROOT / "tests" / "packaging" / pins
            must(uv(), "pip", "install", "--quiet", "--no-deps", "--python", python, "-r", listed)


def tool(name: str) -> Path:
    return VENV / "bin" / name


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "help"
    rest = argv[1:]
    if command not in {"demo", "test", "bench", "docs"}:
        print(__doc__)
        return 0 if command in {"help", "-h", "--help"} else 2
    install()
    if command == "demo":
        return run(tool("cloudguard"), "demo", *rest)
    if command == "test":
        system_requirements()
        peer_wheels()
        for check in (
            (tool("ruff"), "check", "."),
            (tool("ruff"), "format", "--check", "."),
            (tool("mypy"),),
        ):
            if code := run(*check):
                return code
        # One worker more than cores: many tests wait on a child process or a server, and
        # a core idle meanwhile is time lost. worksteal: a worker that runs out takes tests
        # queued for another, so one long negative control never leaves a core idle at the end.
        # --durations: every run says where its time went (the suite's time is a goal, #34).
        workers = str((os.cpu_count() or 1) + 1)
        pytest = ("-m", "pytest", "-n", workers, "--dist", "worksteal", "--durations=30")
        return run(tool("python"), *pytest, *rest)
    if command == "bench":
        return run(tool("python"), "benchmarks/run.py", *rest)
    return run(tool("mkdocs"), "build", "--strict", *rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
