"""`cloudguard demo`: the incident, found by the real audit over HTTPS, then a sealed run.

It builds, in one temporary directory, everything the audit reads: a git
repository whose tests hard-code the task id `cloud-noenv-c7`, a controller
home that knows every healthy worker's task, and a fake ARM (TLS on
127.0.0.1) holding a small fleet in two subscriptions plus the leaked VM.
Then it runs `cloudguard audit --provider azure` as a separate process, as a
user would, with the loopback-only `fake-arm` credential: no ambient
identity is consulted and nothing leaves the machine. Last, it runs
`cloudguard run -- az vm list` to show the seal refusing a reach. Everything
it made is removed, and its exit code is the audit's (1: an orphan found).

`cloudguard demo --serve` (`main(serve=True)`) builds the same and runs no
audit: it leaves the fake fleet serving on 127.0.0.1 in the foreground and
prints the exact `cloudguard audit`, `reap plan` and `reap apply` (a dry run)
commands to try against it, until Ctrl-C (or SIGTERM), then removes all it
made and exits 0.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from threading import Event
from types import FrameType

from cloudguard import exit_codes
from cloudguard_azure.fake_arm import ArmState, FakeArm, FakeArmUnavailable, serve

SUB_FLEET = "3f2b8c1e-5d4a-4e6f-9a7b-0000000f1ee7"
SUB_PILOT = "3f2b8c1e-5d4a-4e6f-9a7b-00000000c7c7"
INCIDENT_VM = "vm-fm7c799d-wkr-01"
INCIDENT_TASK = "cloud-noenv-c7"
# 40 hex digits that are no commit of the demo repository: the incident's generation.
NOT_A_COMMIT = "c7e1d0a94f3b2e6d8a7c5b4f3e2d1c0b9a8f7e6d"
_TIMEOUT = 180  # seconds for each child process; the demo must end by itself

LIFECYCLE_TEST = f'''"""Worker lifecycle: a request without provider or identity is refused."""

TASK_ID = "{INCIDENT_TASK}"  # hard-coded fixture id: never a real task


def test_lifecycle_refuses_without_provider_or_identity(controller):
    request = controller.request(task_id=TASK_ID, provider=None, identity=None)
    assert request.refused
'''

_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "cloudguard demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "cloudguard demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _say(text: str = "") -> None:
    print(text, flush=True)  # flushed: child processes write to the same stdout


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _GIT_IDENTITY
    env["HOME"] = str(repo.parent)  # the user's git config stays out of it
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=_TIMEOUT,
    )
    return done.stdout.strip()


def make_repo(root: Path) -> list[str]:
    """A repository with the lifecycle test and two more commits; returns the commit shas."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "tests").mkdir()
    (root / "tests" / "test_worker_lifecycle.py").write_text(LIFECYCLE_TEST, encoding="utf-8")
    shas = []
    for note in ("worker lifecycle tests", "pool sizing", "drain on deploy"):
        (root / "CHANGES").write_text(f"{note}\n", encoding="utf-8")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", note)
        shas.append(_git(root, "rev-parse", "HEAD"))
    return shas


def make_controller_home(root: Path) -> Path:
    """The controller knows every healthy worker's task; nothing about cloud-noenv-c7."""
    for folder in ("state", "queue", "workers"):
        (root / folder).mkdir(parents=True)
    (root / "state" / "task-2a41b0.meta").write_text("phase=running\n", encoding="utf-8")
    (root / "queue" / "task-5e0c13.json").write_text('{"task": "task-5e0c13"}\n', encoding="utf-8")
    for worker, task in (("w-01", "task-9b17aa"), ("w-02", "task-2a41b0"), ("w-03", None)):
        record = {"worker": worker, "task": task}
        (root / "workers" / f"{worker}.json").write_text(json.dumps(record), encoding="utf-8")
    return root


def seed_fleet(state: ArmState, shas: list[str], now: datetime) -> None:
    head, previous = shas[-1], shas[-2]
    state.add_subscription(SUB_FLEET, "fleet-workers")
    state.add_subscription(SUB_PILOT, "pilot")
    fleet = [
        ("fm-workers", "vm-fm2a41b0-wkr-01", "task-2a41b0", head, "running"),
        ("fm-workers", "vm-fm2a41b0-wkr-02", "task-2a41b0", head, "running"),
        ("fm-workers", "vm-fm5e0c13-wkr-01", "task-5e0c13", previous, "deallocated"),
    ]
    for group, name, task, generation, power in fleet:
        state.add_vm(
            SUB_FLEET,
            group,
            name,
            power_state=power,
            tags={"task-id": task, "repository-generation": generation},
            time_created=now - timedelta(hours=5),
        )
    state.add_vm(SUB_FLEET, "build", "vm-build-agent", tags={"owner": "ci"})  # not the fleet's
    # Azure keeps tag names as typed; the audit matches them case-insensitively.
    state.add_vm(
        SUB_PILOT,
        "pilot",
        "vm-fm9b17aa-wkr-01",
        tags={"Task-Id": "task-9b17aa", "Repository-Generation": head},
        time_created=now - timedelta(hours=3),
    )
    state.add_vm(
        SUB_PILOT,
        "pilot",
        INCIDENT_VM,
        size="Standard_D4as_v6",
        power_state="running",
        tags={"task-id": INCIDENT_TASK, "repository-generation": NOT_A_COMMIT},
        time_created=now - timedelta(hours=30),
    )


def audit_command(arm: FakeArm, home: Path, repo: Path) -> list[str]:
    return [sys.executable, "-m", "cloudguard", "audit", *audit_options(arm, home, repo)]


def live_options(arm: FakeArm) -> list[str]:
    """How `audit` and `reap apply` (whose plan names the cloud) reach the fake: the
    loopback-only `fake-arm` credential (no identity of the user's is consulted), the
    fake's endpoint and its throwaway CA."""
    return [
        "--credential",
        "fake-arm",
        "--management-endpoint",
        arm.base_url,
        "--ca-bundle",
        arm.ca_pem,
    ]


def evidence_options(home: Path, repo: Path) -> list[str]:
    return ["--controller-home", str(home), "--repo", str(repo)]


def audit_options(arm: FakeArm, home: Path, repo: Path) -> list[str]:
    return [
        "--provider",
        "azure",
        *live_options(arm),
        "--subscription",
        SUB_FLEET,
        "--subscription",
        SUB_PILOT,
        *evidence_options(home, repo),
        # A demo of a fake fleet has nothing to remember, and no business in the user's
        # history (the state directory): every run is the first.
        "--no-history",
    ]


def _run(argv: list[str], cwd: Path) -> int:
    # cwd is the demo's own directory: no cloudguard.toml of the user's is picked up.
    # stderr joins stdout so the story reads in order, in a terminal or a log.
    try:
        done = subprocess.run(
            argv, cwd=cwd, timeout=_TIMEOUT, check=False, stderr=subprocess.STDOUT
        )
        return done.returncode
    except subprocess.TimeoutExpired:
        _say(f"cloudguard demo: {argv[3]} did not finish in {_TIMEOUT}s")
        return exit_codes.DID_NOT_RUN


def main(serve: bool = False) -> int:
    """The demo (its exit code is the audit's), or with `serve` the fake fleet left running
    until Ctrl-C (0)."""
    root = Path(tempfile.mkdtemp(prefix="cloudguard-demo-"))
    try:
        return _serve(root) if serve else _demo(root)
    except FakeArmUnavailable as exc:
        # From a checkout, the README's line: pip install ./ './adapters/azure[fake]'.
        print(
            f"cloudguard demo: {exc} (from a checkout: pip install ./ './adapters/azure[fake]')",
            file=sys.stderr,
        )
        return exit_codes.DID_NOT_RUN
    finally:
        shutil.rmtree(root, ignore_errors=True)


def shown(argv: list[str]) -> str:
    """A command as the user pastes it into a shell."""
    return shlex.join(argv)


def own_config(root: Path) -> Path:
    """An empty cloudguard.toml of the user's own (`--config` takes no other)."""
    path = root / "cloudguard.toml"
    if not path.exists():
        path.write_text("# cloudguard demo --serve: every setting is on the command line\n")
        path.chmod(0o600)
    return path


def try_commands(arm: FakeArm, home: Path, repo: Path, root: Path) -> list[str]:
    """The commands to try against the running fake, in order: the audit (a table), the
    same audit as JSON, the plan made from it, and the plan's dry run (reads each item live,
    changes nothing)."""
    report, plan = str(root / "audit.json"), str(root / "plan.json")
    # The demo's own, empty cloudguard.toml: run from a project, the commands read none of
    # its settings (a discovered file's inventory or tag names would join the fake's).
    config = ["--config", str(own_config(root))]
    audit = ["cloudguard", "audit", *audit_options(arm, home, repo), *config]
    return [
        shown(audit),
        shown([*audit, "--format", "json", "--output", report]),
        shown(["cloudguard", "reap", "plan", report, "--output", plan]),
        shown(
            [
                "cloudguard",
                "reap",
                "apply",
                plan,
                *live_options(arm),
                *evidence_options(home, repo),
                "--no-history",
                "--log",
                str(root / "reap.jsonl"),
                *config,
            ]
        ),
    ]


def _serve(root: Path) -> int:
    now = datetime.now(UTC)
    shas = make_repo(root / "repo")
    home = make_controller_home(root / "controller")
    stop = Event()

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, stopping) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with serve() as arm:
            seed_fleet(arm.state, shas, now)
            _say(
                f"cloudguard demo: a fake Azure Resource Manager is serving HTTPS on "
                f"{arm.base_url} (its throwaway CA: {arm.ca_pem}), {len(arm.state.vms)} VMs in "
                f"2 subscriptions, one of them leaked ({INCIDENT_VM})."
            )
            _say(
                f"Controller home {home}; repository {root / 'repo'}. The credential "
                "`fake-arm` works on loopback only: nothing leaves the machine."
            )
            _say()
            _say("Try, in another terminal (the audit exits 1: it finds the orphan):")
            for command in try_commands(arm, home, root / "repo", root):
                _say(f"  $ {command}")
            _say()
            _say("Press Ctrl-C to stop the fake fleet (everything under it is removed).")
            stop.wait()
            requests = arm.faults.total_requests
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _say(f"cloudguard demo: stopped after {requests} requests; {root} is removed.")
    return 0


def _demo(root: Path) -> int:
    now = datetime.now(UTC)
    shas = make_repo(root / "repo")
    home = make_controller_home(root / "controller")
    with serve() as arm:
        seed_fleet(arm.state, shas, now)
        _say("cloudguard demo")
        _say("===============")
        _say(
            f"A fake Azure Resource Manager is serving HTTPS on {arm.base_url} with "
            f"{len(arm.state.vms)} VMs in 2 subscriptions."
        )
        _say(
            f"Controller home {home} knows the healthy workers' tasks; repository "
            f"{root / 'repo'} holds their generations and a test that hard-codes "
            f"`{INCIDENT_TASK}`."
        )
        _say()
        _say("$ cloudguard audit --provider azure --subscription ... --credential fake-arm ...")
        audit_code = _run(audit_command(arm, home, root / "repo"), root)
        requests = arm.faults.total_requests
    _say()
    _say(
        f"The audit made {requests} HTTPS requests (per subscription, one listing each of "
        f"VMs with their power state, disks, every other resource and resource groups) "
        f"and exited {audit_code}."
    )
    _say()
    _say("Now a test that shells out to the Azure CLI, run under the seal:")
    _say("$ cloudguard run -- az vm list")
    run_code = _run(
        [
            sys.executable,
            "-m",
            "cloudguard",
            "run",
            "--log",
            str(root / "reach.jsonl"),
            "--",
            "az",
            "vm",
            "list",
        ],
        root,
    )
    _say()
    _say(f"The sealed run exited {run_code} (98: a cloud reach was refused and recorded).")
    _say(f"Demo finished; everything it made under {root} is removed. Exit {audit_code}.")
    return audit_code
