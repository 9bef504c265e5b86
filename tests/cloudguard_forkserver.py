"""A warm start for the negative controls' inner pytest runs: fork, do not exec.

Each control runs its named tests in a pytest of their own (tests/cloudguard_mutants.py).
Most of such a run's time, on a quiet machine, went before its first test: a fresh
interpreter importing pytest and the pytest11 plugins the environment installs
(pytest-httpx, respx, pytest-recording, anyio, requests-mock, ...). None of that
depends on the mutant. So each outer process (an xdist worker) keeps one server that
imported exactly that, and forks a child per run that then does what
`python -m pytest ...` would do with the same working directory, environment,
PYTHONPATH, stdin, stdout and stderr.

What the server may import is what a fresh `python -m pytest` imports before the
cloudguard plugin installs its guards (all pytest11 plugins load first), and nothing
of the repository: cloudguard, the adapters, conftest and tests/ are imported by
the child, from the mutant copy first on sys.path, as today. The SDKs the tests use
(boto3, moto, the azure and google SDKs) are preloaded only when the caller asks
(`preload`, a server of its own): the in-process guards patch an SDK when it is imported
after the guards (tests/guard/test_late_import_controls.py and the `imports.when_imported`
path), and a preloaded one takes the other path (patched at once). So the guard's own
controls never ask; the controls of what runs above the guards (the adapters' sweeps and
reapers) do, and their unbroken run is made on a server that preloaded the same.

The server starts no thread (fork after threads is unsafe) and refuses to serve when
an import started one, or imported a module of the repository; the child reseeds what
fork shares (random reseeds itself, tempfile notices the new pid). A run whose
interpreter-wide settings (PYTHON* variables, the locale's) differ from the server's
is not served, and neither is any run when the server cannot start: the caller then
runs `python -m pytest` as before (`Unavailable`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import types
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# Plugins the inner runs block (`-p no:xdist`): never imported by them, so not preloaded.
BLOCKED_PLUGINS = {"xdist", "xdist.looponfail"}
# The repository's own distributions: their modules come from the mutant copy, never preloaded.
OWN_DISTRIBUTIONS = {"cloudguard-ci", "cloudguard-aws", "cloudguard-azure", "cloudguard-toycloud"}
# Read by the interpreter as it starts (flags, stdio, locale): a run must agree with the server.
_AT_START = ("PYTHON", "LC_", "LANG")
_MAX_MESSAGE = 1 << 20
SWITCH = "CONTROLS_FORK_SERVER"  # "0": every run is a fresh `python -m pytest` (measurements)


class Unavailable(Exception):
    """The fork server cannot run this one: the caller starts `python -m pytest` itself."""


# -- the client: one server per outer process --------------------------------------------------


class Completed:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


class TimedOut(Exception):
    pass


_servers: dict[tuple[str, ...], _Server] = {}  # one per preload asked for
served = 0  # runs this process's fork server ran (its tests check they took this path)
_broken: set[tuple[str, ...]] = set()  # kinds of server that failed: runs go without them


def run(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    preload: Sequence[str] = (),
) -> Completed:
    """`python -m pytest *args` in `cwd` with `env`, as a forked child of the warm server that
    also imported the modules `preload` names (third-party SDKs; module docstring)."""
    global served
    key = tuple(sorted(preload))
    if key in _broken or os.environ.get(SWITCH) == "0" or not hasattr(os, "pidfd_open"):
        raise Unavailable("off")
    server = _servers.get(key)
    if server is None or server.owner != os.getpid():
        try:
            server = _servers[key] = _Server.start(env, key)
        except (OSError, Unavailable):
            _broken.add(key)
            raise Unavailable("the fork server did not start") from None
    if server.started_with != _at_start(env):
        raise Unavailable("this run's interpreter settings differ from the server's")
    try:
        completed = server.run(list(args), str(cwd), dict(env), timeout)
    except (OSError, ValueError, json.JSONDecodeError):
        _broken.add(key)
        server.close()
        del _servers[key]
        raise Unavailable("the fork server broke") from None
    served += 1
    return completed


def _at_start(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_AT_START) and k != "PYTHONPATH"}


class _Server:
    def __init__(self, process: subprocess.Popen[bytes], sock: socket.socket, env: dict[str, str]):
        self.process, self.sock, self.started_with = process, sock, env
        self.owner = os.getpid()

    @classmethod
    def start(cls, env: Mapping[str, str], preload: Sequence[str] = ()) -> _Server:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        server_env = dict(env, PYTHONPATH=str(TESTS))
        main = (
            "import cloudguard_forkserver; "
            f"cloudguard_forkserver.serve({theirs.fileno()}, {list(preload)!r})"
        )
        process = subprocess.Popen(
            [sys.executable, "-c", main],
            env=server_env, cwd=TESTS,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),), close_fds=True,
        )  # fmt: skip
        theirs.close()
        server = cls(process, ours, _at_start(env))
        ready = _receive(ours)
        if ready.get("ready") is not True:
            server.close()
            raise Unavailable(str(ready.get("refused", "the fork server refused")))
        return server

    def run(self, args: list[str], cwd: str, env: dict[str, str], timeout: float) -> Completed:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            request = json.dumps({"args": args, "cwd": cwd, "env": env}).encode()
            socket.send_fds(self.sock, [len(request).to_bytes(4, "big") + request],
                            [0, out_w, err_w])  # fmt: skip
        finally:
            os.close(out_w)
            os.close(err_w)
        pid = int(_receive(self.sock)["pid"])
        output, timed_out = _read_both(out_r, err_r, timeout)
        if timed_out:
            # As subprocess.run does on a timeout: the child is killed, its own children are not.
            os.kill(pid, signal.SIGKILL)
        status = int(_receive(self.sock)["status"])
        if timed_out:
            raise TimedOut()
        return Completed(status, *output)

    def close(self) -> None:
        self.sock.close()  # the server ends at the end of its socket
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _read_both(out: int, err: int, timeout: float) -> tuple[tuple[str, str], bool]:
    """Both pipes to their ends (the child and whatever it left holding them), or a timeout."""
    import time

    deadline = time.monotonic() + timeout
    chunks: dict[int, list[bytes]] = {out: [], err: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        timed_out = False
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in selector.select(left):
                data = os.read(key.fd, 1 << 16)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    os.close(out)
    os.close(err)
    return (_text(b"".join(chunks[out])), _text(b"".join(chunks[err]))), timed_out


def _text(data: bytes) -> str:
    """As `subprocess.run(text=True)` decodes: the locale's encoding, universal newlines."""
    import locale

    decoded = data.decode(locale.getencoding(), errors="strict")
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


def _receive(sock: socket.socket) -> dict[str, object]:
    size = _exactly(sock, 4)
    length = int.from_bytes(size, "big")
    if length > _MAX_MESSAGE:
        raise ValueError("an oversized message")
    message = json.loads(_exactly(sock, length))
    assert isinstance(message, dict)
    return message


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = sock.recv(size - len(data))
        if not more:
            raise OSError("the fork server closed its socket")
        data += more
    return data


def _send(sock: socket.socket, message: Mapping[str, object]) -> None:
    data = json.dumps(message).encode()
    sock.sendall(len(data).to_bytes(4, "big") + data)


# -- the server ---------------------------------------------------------------------------------


def serve(fd: int, sdks: Sequence[str] = ()) -> None:
    """Preload, then fork one child per request until the client closes the socket."""
    sock = socket.socket(fileno=fd)
    refused = _preload(sdks)
    if refused:
        _send(sock, {"refused": refused})
        return
    # What the preload made is never garbage: kept out of the children's cycle collections
    # (each child's first full one walked the whole preload, SDKs and all, 0.9 s a run, and
    # copied every page it touched).
    gc.freeze()
    _send(sock, {"ready": True})
    base_path = sys.path[2:]  # after "" (-c) and tests/ (this server's PYTHONPATH)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 4 + _MAX_MESSAGE, 3)
        except OSError:
            return
        if not message:
            return  # the outer process is done (or gone)
        length = int.from_bytes(message[:4], "big")
        body = message[4:]
        while len(body) < length:
            body += _exactly(sock, length - len(body))
        request = json.loads(body)
        pid = os.fork()
        if pid == 0:
            sock.close()
            _child(request, fds, base_path)  # never returns
        for received in fds:
            os.close(received)
        _send(sock, {"pid": pid})
        _send(sock, {"status": _wait(pid, sock)})


def _wait(pid: int, sock: socket.socket) -> int:
    """The child's exit code as subprocess reports it (-N for a signal); the child is killed
    when the outer process goes away meanwhile."""
    pidfd = os.pidfd_open(pid)
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(pidfd, selectors.EVENT_READ)
            selector.register(sock, selectors.EVENT_READ)
            while True:
                ready = {key.fileobj for key, _ in selector.select()}
                if pidfd in ready:
                    break
                if sock in ready and not sock.recv(1, socket.MSG_PEEK):
                    os.kill(pid, signal.SIGKILL)
                    selector.unregister(sock)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
    return os.waitstatus_to_exitcode(status)


def _preload(sdks: Sequence[str] = ()) -> str:
    """Import what `python -m pytest` imports before the guards install, then `sdks`; '' or
    why not."""
    import importlib
    import threading
    from importlib.metadata import entry_points

    import _pytest.config
    import pytest  # noqa: F401
    from _pytest.assertion import AssertionState
    from _pytest.assertion.rewrite import AssertionRewritingHook, assertstate_key

    for name in _pytest.config.default_plugins:
        if name != "cacheprovider":  # the inner runs block it (`-p no:cacheprovider`)
            importlib.import_module(f"_pytest.{name}")
    # Imported as pytest imports them: through its assertion rewriter, which rewrites every
    # module of a distribution that has a pytest11 plugin (a child's pytest then sees them
    # loaded by a rewriter, as in a fresh run, and warns of nothing).
    config = _pytest.config.get_config()
    config.stash[assertstate_key] = AssertionState(config, "rewrite")
    rewriter = AssertionRewritingHook(config)
    config._mark_plugins_for_rewrite(rewriter, disable_autoload=False)
    sys.meta_path.insert(0, rewriter)
    try:
        for entry in entry_points(group="pytest11"):
            dist = entry.dist.name if entry.dist is not None else ""
            if entry.name not in BLOCKED_PLUGINS and dist not in OWN_DISTRIBUTIONS:
                importlib.import_module(entry.module)
    finally:
        sys.meta_path.remove(rewriter)
    # What pytest imports next, checking `minversion` and `required_plugins`, still before the
    # guards install.
    import packaging.requirements
    import packaging.version  # noqa: F401

    for name in sdks:
        try:
            importlib.import_module(name)
        except ImportError as error:  # an environment without that SDK: no server, no harm
            return f"the preload could not import {name}: {error}"
    sys.modules.pop("cloudguard_forkserver", None)  # the child imports it no more than today
    own = sorted(name for name, module in list(sys.modules.items()) if _of_the_repository(module))
    if own:
        return f"the preload imported the repository's {own}"
    # A thread of Python's, or one an extension started natively (grpc may), which
    # `threading` does not count: fork after either is unsafe.
    if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
        return "the preload started a thread"
    return ""


def _of_the_repository(module: types.ModuleType) -> bool:
    """A module of the repository's sources (the virtualenv may live inside the checkout)."""
    where = str(getattr(module, "__file__", None) or "")
    inside = (str(REPO) + os.sep, str(Path(sys.prefix).resolve()) + os.sep)
    return where.startswith(inside[0]) and not where.startswith(inside[1])


def _child(request: Mapping[str, object], fds: list[int], base_path: list[str]) -> None:
    """Become `python -m pytest ARGS` in CWD with ENV: the same path, argv, fds; then exit as the
    interpreter would (threads joined, atexit run, streams flushed)."""
    code = 1
    try:
        stdin, stdout, stderr = fds
        for target, fd in ((0, stdin), (1, stdout), (2, stderr)):
            os.dup2(fd, target)
            os.close(fd)
        cwd, env, args = str(request["cwd"]), request["env"], request["args"]
        assert isinstance(env, dict) and isinstance(args, list)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        pythonpath = [p for p in str(env.get("PYTHONPATH", "")).split(os.pathsep) if p]
        sys.path[:] = [os.getcwd(), *pythonpath, *base_path]  # as `-m` with PYTHONPATH makes it
        sys.path_importer_cache.clear()
        sys.argv[:] = ["-m", *map(str, args)]
        sys.modules["__main__"] = types.ModuleType("__main__")  # not the server's `-c` namespace
        code = _run_pytest_as_main()
    finally:
        os._exit(code)


def _run_pytest_as_main() -> int:
    import atexit
    import runpy
    import threading

    try:
        runpy._run_module_as_main("pytest", alter_argv=True)  # type: ignore[attr-defined]
        code = 0
    except SystemExit as done:
        code = _exit_code(done.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code


def _exit_code(code: object) -> int:
    """What the interpreter exits with for `SystemExit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
