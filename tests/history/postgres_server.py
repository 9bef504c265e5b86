"""A real, throwaway PostgreSQL server for the history tests.

`initdb` makes a cluster of its own in a temporary directory and `postgres`
serves it on a free 127.0.0.1 port, password-authenticated (SCRAM), with a
random password: the tests' URLs carry a real secret that messages must not
show. PostgreSQL refuses to run as root, so as root (CI, these machines) the
cluster belongs to, and the server runs as, the unprivileged uid 65534
through `setpriv`. The server is stopped (fast shutdown) and its directory
removed at the end, and stops by itself when the test process that started it
dies without getting there. Debian installs the server's programs outside PATH
(`/usr/lib/postgresql/<version>/bin`); `python3 dev.py test` installs them.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

UNPRIVILEGED = 65534
USER = "cloudguard"
READY_WITHIN = 60.0  # seconds: a bound on waiting for start-up, not a measurement


def programs() -> Path:
    """The directory holding initdb and postgres: on PATH, else Debian's newest version."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if not versions:
        raise RuntimeError(
            "no PostgreSQL server programs (initdb, postgres): install Debian's postgresql "
            "package (python3 dev.py test does, as root)"
        )
    return Path(versions[-1]).parent


def _as_owner(argv: list[str], *, dies_with_parent: bool = False) -> list[str]:
    """`argv` as the cluster's owner; with `dies_with_parent`, a server the kernel stops
    (SIGINT: fast shutdown) the moment the test process that started it dies, however it
    dies (a CI time-out's SIGKILL, an xdist worker lost): no test run leaves one behind. The
    parent-death signal is set by setpriv after it changes user (a change of user clears it)."""
    owner = ["--reuid", str(UNPRIVILEGED), "--regid", str(UNPRIVILEGED), "--clear-groups"]
    wrapper = ["setpriv", *(owner if os.geteuid() == 0 else [])]
    if dies_with_parent:
        wrapper += ["--pdeathsig", "SIGINT"]
    return [*wrapper, "--", *argv] if len(wrapper) > 1 else argv


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    def __init__(self) -> None:
        self.bin = programs()
        self.root = Path(tempfile.mkdtemp(prefix="cloudguard-pg-", dir="/tmp"))
        self.data = self.root / "data"
        self.password = secrets.token_urlsafe(18)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log = self.root / "server.log"

    def start(self) -> PostgresServer:
        password_file = self.root / "password"
        password_file.write_text(self.password + "\n")
        if os.geteuid() == 0:
            for path in (self.root, password_file):
                os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
        subprocess.run(
            _as_owner([str(self.bin / "initdb"), "-D", str(self.data), "-U", USER,
                       "--pwfile", str(password_file), "-A", "scram-sha-256",
                       "-E", "UTF8", "--no-locale", "--no-sync"]),
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
        password_file.unlink()
        for _ in range(5):  # a port taken between the probe and the bind: try another
            self.port = _free_port()
            if self._serve():
                return self
        raise RuntimeError(f"postgres did not start: {self.log.read_text()[-2000:]}")

    def _serve(self) -> bool:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                _as_owner([str(self.bin / "postgres"), "-D", str(self.data),
                           "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
                           "-c", f"unix_socket_directories={self.root}",
                           "-c", "fsync=off", "-c", "max_connections=40"],
                          dies_with_parent=True),
                stdout=log, stderr=log, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + READY_WITHIN
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            if self._accepts():
                return True
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"postgres not ready within {READY_WITHIN:g} s: {self.log}")

    def _accepts(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url("postgres"), connect_timeout=2).close()
        except psycopg.OperationalError:
            return False
        return True

    def url(self, database: str) -> str:
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)
