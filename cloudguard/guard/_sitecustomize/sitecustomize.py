"""cloudguard's in-process guards for every Python child of a sealed run.

The seal puts this directory first on PYTHONPATH, so a Python process
started under the seal (a test's subprocess, an xdist worker, a provider
script importing an SDK) imports this module at startup, with no change
to its own code. When a reach log is armed (`CLOUDGUARD_REACH_LOG`), the
botocore, azure-core and socket guards are installed, recording to that log.

A sitecustomize that was already on the path (a project's, the distro's)
still runs: this one executes it first, then installs the guards, so the
guards wrap whatever it patched and see every call first.

Out of reach: `python -I`/`-E`/`-S` (no PYTHONPATH or no site), a child
whose environment drops PYTHONPATH, and anything that is not Python; those
are contained by the seal and the shims only. Nothing here may break the
child: a guard that cannot be installed is reported on stderr.
"""

from __future__ import annotations

import os
import sys


def _chain() -> None:
    """Execute the sitecustomize this one shadows, as if it had been found first."""
    # Once per process: a shadowed sitecustomize that chains on in turn (the test fence
    # does) finds this one again, and without the mark the two would recurse forever.
    if getattr(sys, "_cloudguard_chained", False):
        return
    sys._cloudguard_chained = True  # type: ignore[attr-defined]
    # The PathFinder already on sys.meta_path: importing importlib.machinery costs every child.
    finder = next(f for f in sys.meta_path if getattr(f, "__name__", "") == "PathFinder")
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = finder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    import importlib.util

    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _install(log: str) -> None:
    # cloudguard may not be importable from this interpreter's own path (another venv):
    # borrow the directory holding this copy of cloudguard for the import, then give it back.
    package_parent = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    )
    added = package_parent not in sys.path
    if added:
        sys.path.insert(0, package_parent)
    try:
        from cloudguard.guard import inprocess

        inprocess.install(log=log, find_policy=_policy_of_the_live_seal)
    finally:
        if added and package_parent in sys.path:
            sys.path.remove(package_parent)


def _policy_of_the_live_seal():
    """This child is handed no policy: rebuild it from the live seal, on its first refusal."""
    from pathlib import Path

    from cloudguard.guard.seal import SEAL_DIR_VARIABLE, Seal, policy
    from cloudguard.guard.seal_registry import load_registry

    root = os.environ.get(SEAL_DIR_VARIABLE)
    if not root:
        return None
    try:
        return policy(load_registry(search_from=Path.cwd()), Seal(Path(root)))
    except Exception:  # a broken project registry must not hide the refusal itself
        return None


try:
    _chain()
finally:
    _log = os.environ.get("CLOUDGUARD_REACH_LOG")
    if _log:
        try:
            _install(_log)
        except Exception as _error:  # never break the child; say plainly it is unguarded
            sys.stderr.write(
                f"cloudguard: in-process guards NOT installed in this Python ({_error!r});\n"
                "  only the seal and the shims contain it\n"
            )
