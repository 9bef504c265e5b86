"""The refusing shims and provider under bad input and faults, called as a suite would."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from guard_helpers import child, cloudguard, minimal_env, reaches
from named_checks import broken

from cloudguard.guard import reach, rendezvous
from cloudguard.guard.keeper import Keeper
from cloudguard.guard.seal import Seal, create_seal
from cloudguard.guard.seal_registry import load_registry


@pytest.fixture
def seal() -> Iterator[Seal]:
    made = create_seal(load_registry())
    yield made
    made.remove()


def refuse(
    seal: Seal, tool: str, *args: str | bytes, log: str, **popen: object
) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": "/usr/bin:/bin", reach.LOG_VARIABLE: log, "CLOUDGUARD_TEST": "t::refuse"}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [str(seal.bin_dir / tool), *args], env=env, capture_output=True, timeout=30, **popen
    )


def test_every_shipped_shim_records_then_refuses_with_98(seal: Seal, armed_log: Path) -> None:
    tools = [*load_registry().shims, "cloudguard-refusing-provider"]
    for tool in tools:
        result = refuse(seal, tool, "list", log=str(armed_log))
        assert result.returncode == 98, (tool, result.stderr)
        assert b"cloudguard: refused" in result.stderr
        assert b"ALLOW" not in result.stderr.upper()  # no bypass is advertised
    recorded = [r["target"].split()[0] for r in reaches(armed_log)]
    assert recorded == [*tools[:-1], "provider"], broken(
        "every-refusal-recorded", f"refusals were not recorded: {recorded}"
    )


# What a refuser may import beyond what a bare `python -I -S` loads: the fast path's promise
# (docs/guard.md: start in about a bare interpreter's time). `typing` alone, with the `re`,
# `enum` and `collections` it loads, cost a shim 8 ms, more than the bare interpreter's start;
# `os` (the refusers use `posix`) about 1 ms.
LEAN = {
    "__future__", "time", "_json", "_socket", "cloudguard", "cloudguard.guard",
    "cloudguard.guard.refuse", "cloudguard.guard.policy", "cloudguard.guard.reach",
    "cloudguard.guard.redaction", "cloudguard.guard.hints", "cloudguard.escape",
}  # fmt: skip


def _imported(*argv: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a Python process loads, from its own `-X importtime` lines."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", *argv],
        env={"PATH": "/usr/bin:/bin", **(env or {})}, capture_output=True, text=True,
        timeout=30, check=False,
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # the first is the header


@pytest.mark.parametrize("tool", ["az", "cloudguard-refusing-provider"])
def test_a_refuser_imports_only_the_lean_set(armed_log: Path, tool: str) -> None:
    """As in a run: the refuser hands its record to the run's record keeper."""
    keeper = Keeper(str(armed_log), armed_log.stat().st_size)
    sealed = create_seal(load_registry(), log=str(armed_log), keepers=[keeper.address])
    try:
        bare = _imported("-c", "pass")
        refuser = _imported(
            str(sealed.bin_dir / tool), "list", env={reach.LOG_VARIABLE: str(armed_log)}
        )
    finally:
        keeper.close()
        sealed.remove()

    assert len(keeper.records) == 1, keeper.records  # it ran, and the keeper holds its record
    assert refuser - bare <= LEAN, broken(
        "refusers-import-only-the-lean-set",
        f"{tool} imports {sorted(refuser - bare - LEAN)} beyond the lean set",
    )


def test_non_utf8_argv_is_recorded_as_escaped_text(seal: Seal, armed_log: Path) -> None:
    result = refuse(seal, "az", b"group", b"caf\xe9-\xff", log=str(armed_log))

    assert result.returncode == 98
    (record,) = reaches(armed_log)
    assert record["argv"] == ["az", "group", "caf\\xe9-\\xff"]


def test_a_very_large_argv_is_refused_and_bounded(seal: Seal, armed_log: Path) -> None:
    args = ["--tags", *[f"k{n}=" + "v" * 4000 for n in range(300)]]  # ~1.2 MB of argv

    result = refuse(seal, "aws", *args, log=str(armed_log))

    assert result.returncode == 98
    line = armed_log.read_text().splitlines()[-1]
    assert len(line) < 700_000
    assert json.loads(line)["argv"][-1].startswith("...<")


def test_binary_stdin_is_never_read_nor_recorded(seal: Seal, armed_log: Path) -> None:
    payload = b"\x00\xffSECRET-STDIN-PAYLOAD" * 1000

    result = refuse(seal, "az", "login", "--service-principal", log=str(armed_log), input=payload)

    assert result.returncode == 98
    assert b"SECRET-STDIN-PAYLOAD" not in armed_log.read_bytes()


@pytest.mark.parametrize("tool", ["az", "aws", "cloudguard-refusing-provider"])
def test_stdin_is_never_read_a_file_given_as_stdin_keeps_offset_0(
    seal: Seal, armed_log: Path, tmp_path: Path, tool: str
) -> None:
    # The shim shares this open file description: any read moves its offset.
    stdin = tmp_path / "stdin"
    stdin.write_bytes(b"SECRET-STDIN-PAYLOAD\n" * 100)
    with stdin.open("rb") as handle:
        result = refuse(seal, tool, "login", log=str(armed_log), stdin=handle)
        offset = handle.tell()

    assert result.returncode == 98
    assert offset == 0, broken(
        "stdin-never-read", f"the refuser read stdin: the file offset moved to {offset}"
    )


def test_control_a_reader_moves_the_offset(tmp_path: Path) -> None:
    stdin = tmp_path / "stdin"
    stdin.write_bytes(b"payload\n" * 100)
    with stdin.open("rb") as handle:
        subprocess.run(["cat"], stdin=handle, stdout=subprocess.DEVNULL, check=True)
        assert handle.tell() == stdin.stat().st_size


def test_a_stdin_that_never_closes_does_not_hang_the_refusal(seal: Seal, armed_log: Path) -> None:
    process = subprocess.Popen(
        [str(seal.bin_dir / "az"), "login"],
        stdin=subprocess.PIPE,  # held open, never written, never closed
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", reach.LOG_VARIABLE: str(armed_log)},
    )
    try:
        assert process.wait(timeout=10) == 98
    finally:
        process.kill()
        process.communicate()
    assert len(reaches(armed_log)) == 1


@pytest.mark.parametrize(
    ("log", "reason"),
    [("/dev/full", "No space left on device"), ("/nonexistent/dir/log", "No such file")],
)
def test_a_log_that_cannot_be_written_still_refuses_and_says_so(
    seal: Seal, log: str, reason: str
) -> None:
    result = refuse(seal, "az", "vm", "list", log=log)

    assert result.returncode == 98
    stderr = result.stderr.decode()
    assert f"NOT recorded: cannot write reach log {log}: {reason}" in stderr
    assert "cloudguard: refused `az vm list`" in stderr


def test_a_deleted_log_refuses_and_check_fails_closed(seal: Seal, armed_log: Path) -> None:
    armed_log.unlink()

    result = refuse(seal, "az", "vm", "list", log=str(armed_log))

    assert result.returncode == 98 and b"NOT recorded" in result.stderr
    assert not armed_log.exists(), "a writer never recreates a deleted log"
    assert cloudguard("check", "--log", str(armed_log)).returncode == 97


def test_a_shim_made_for_a_log_records_there_with_a_scrubbed_environment(
    armed_log: Path,
) -> None:
    made = create_seal(load_registry(), log=str(armed_log))
    try:
        result = subprocess.run(
            ["env", "-i", str(made.bin_dir / "az"), "account", "show"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    finally:
        made.remove()

    assert result.returncode == 98
    assert b"NOT recorded" not in result.stderr, broken(
        "a-shim-knows-its-log", f"a shim with a scrubbed environment did not record: {result}"
    )
    (record,) = reaches(armed_log)
    assert record["target"] == "az account show", "a scrubbed environment lost the record"


def test_no_armed_log_still_refuses_and_says_it_is_not_recorded(seal: Seal) -> None:
    result = subprocess.run(
        [str(seal.bin_dir / "aws"), "sts", "get-caller-identity"],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 98
    assert b"NOT recorded: CLOUDGUARD_REACH_LOG is not set" in result.stderr


PLANTED = {
    "AZURE_CLIENT_SECRET": "planted-azure-secret-0001",
    "AZURE_CLIENT_ID": "planted-client-id-0002",
    "AZURE_TENANT_ID": "planted-tenant-0003",
    "AWS_ACCESS_KEY_ID": "AKIAPLANTEDKEY000004",
    "AWS_SECRET_ACCESS_KEY": "planted-aws-secret-0005",
    "AWS_SESSION_TOKEN": "planted-session-0006",
    "AWS_PROFILE": "planted-profile-0007",
    "IDENTITY_ENDPOINT": "http://169.254.169.254/planted-0008",
    "IDENTITY_HEADER": "planted-header-0009",
    "MSI_SECRET": "planted-msi-0010",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "planted-oidc-0011",
    "GOOGLE_APPLICATION_CREDENTIALS": "/planted/gcp-0012.json",
    "ARM_CLIENT_SECRET": "planted-arm-0013",
    "FM_HOME": "/planted/fm-home-0014",
    "FM_WORKER_PROVIDER_COMMAND": "/planted/real-provider-0015",
}
PLANTED_FILES = {
    ".aws/credentials": "[default]\naws_secret_access_key = planted-file-secret-0101\n",
    ".aws/config": "[default]\nregion = planted-region-0102\n",
    ".azure/msal_token_cache.json": '{"AccessToken": {"x": "planted-file-token-0103"}}',
    ".azure/azureProfile.json": '{"subscriptions": ["planted-sub-0104"]}',
    ".IdentityService/msal.cache": "planted-file-cache-0105",
    ".config/gcloud/credentials.db": "planted-file-gcloud-0106",
}
HOSTILE_CHILD = """
import json, os, subprocess, sys
seen = {name: os.environ.get(name) for name in sys.argv[1].split(",")}
def call(*argv):
    try:
        return subprocess.call(argv)
    except FileNotFoundError:
        return 127
codes = [
    call("az", "account", "get-access-token", "--password", "hunter2-argv-0201"),
    call("aws", "sts", "get-caller-identity", "--endpoint-url", "http://127.0.0.1:9"),
    call(os.environ["FM_WORKER_PROVIDER_COMMAND"], "spawn", "--size", "D4as_v6"),
]
stores = {n: os.environ.get(n) for n in ("AZURE_CONFIG_DIR", "AWS_CONFIG_FILE",
          "AWS_SHARED_CREDENTIALS_FILE", "AWS_EC2_METADATA_DISABLED", "CLOUDSDK_CONFIG")}
print(json.dumps({"seen": seen, "codes": codes, "stores": stores}))
"""


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_hostile_environment_nothing_planted_reaches_the_command_or_the_record(
    tmp_path: Path,
) -> None:
    env = minimal_env(tmp_path, **PLANTED)
    home = Path(env["HOME"])
    for relative, content in PLANTED_FILES.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(content)
    before = _digest(home)
    log = tmp_path / "reach.jsonl"

    result = cloudguard(
        "run", "--log", str(log), "--", *child(HOSTILE_CHILD), ",".join(PLANTED), env=env
    )

    report = json.loads(result.stdout)
    leaked = {name for name, value in report["seen"].items() if value == PLANTED[name]}
    assert not leaked, broken(
        "identity-variables-dropped",
        f"planted identity variables reached the sealed command: {sorted(leaked)}",
    )
    assert report["codes"] == [98, 98, 98], broken(
        "cli-and-provider-refused", f"az, aws and the provider were not each refused: {report}"
    )
    assert result.returncode == 98, f"hostile run did not go red: {result.stderr}"
    assert all(str(home) not in (value or "") for value in report["stores"].values())
    assert report["stores"]["AWS_EC2_METADATA_DISABLED"] == "true"
    vias = sorted(r["via"] for r in reaches(log))
    assert vias == ["aws-shim", "az-shim", "provider"], f"every reach recorded, got {vias}"
    everything = log.read_text() + result.stdout + result.stderr
    secrets = [*PLANTED.values(), "hunter2-argv-0201", *PLANTED_FILES.values()]
    found = [s for s in secrets if s in everything]
    assert not found, f"planted secret values appear in the log or output: {found}"
    assert _digest(home) == before, "planted credential files must be byte-identical afterwards"
    assert seal_dropped(result.stderr) == sorted(PLANTED)


def seal_dropped(stderr: str) -> list[str]:
    (line,) = [x for x in stderr.splitlines() if x.startswith("CLOUDGUARD_AMBIENT_SEAL")]
    return line.split("dropped=", 1)[1].split(",")


def test_doctor_passes_inside_a_sealed_run(tmp_path: Path) -> None:
    result = cloudguard(
        "run", "--", sys.executable, "-m", "cloudguard", "doctor", env=minimal_env(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert "the seal holds" in result.stderr


def test_doctor_names_each_way_the_seal_does_not_hold(tmp_path: Path) -> None:
    fakebin = tmp_path / "fakebin"
    fakebin.mkdir()
    (fakebin / "az").write_text("#!/bin/sh\n")
    (fakebin / "az").chmod(0o755)
    script = (
        f'AZURE_CLIENT_SECRET=x FM_WORKER_PROVIDER_COMMAND=/bin/true PATH="{fakebin}:$PATH" '
        "PYTHONPATH=/elsewhere "
        f"{sys.executable} -m cloudguard doctor"
    )

    result = cloudguard("run", "--", "sh", "-c", script, env=minimal_env(tmp_path))

    assert result.returncode == 97, result.stderr
    assert "identity variable AZURE_CLIENT_SECRET is set" in result.stderr
    assert (
        "FM_WORKER_PROVIDER_COMMAND is not bound to the refusing provider (/bin/true)"
        in result.stderr
    )
    assert f"`az` resolves to {fakebin}/az, not the guard" in result.stderr
    assert "PYTHONPATH does not start with the in-process guards" in result.stderr


def test_doctor_under_half_a_seal_fails_naming_the_missing_log(tmp_path: Path) -> None:
    # A seal dir claimed without a log: the seal's own checks, each failing fact named.
    gone = str(tmp_path / "seal-gone")
    result = cloudguard("doctor", env=minimal_env(tmp_path, CLOUDGUARD_SEAL_DIR=gone))

    assert result.returncode == 97
    assert "CLOUDGUARD_REACH_LOG is not set" in result.stderr
    assert "CLOUDGUARD_SEAL_DIR does not name a live seal directory" in result.stderr


def test_identity_variables_still_set_are_recorded_by_name_only(
    seal: Seal, armed_log: Path
) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        reach.LOG_VARIABLE: str(armed_log),
        "AWS_SECRET_ACCESS_KEY": "v-0301",
    }
    env.update(seal.redirections())
    subprocess.run(
        [str(seal.bin_dir / "aws"), "s3", "ls"], env=env, capture_output=True, check=False
    )

    (record,) = reaches(armed_log)
    assert record["identity_vars"] == [
        "AWS_SECRET_ACCESS_KEY"
    ]  # the seal's own redirections are not
    assert "v-0301" not in armed_log.read_text()


def test_what_a_killed_keeper_left_is_swept_and_a_live_keepers_channel_is_not(
    armed_log: Path,
) -> None:
    # A keeper killed with SIGKILL leaves its socket (nobody listens) and its mark behind.
    home = rendezvous.directory()
    assert home is not None
    stale = Path(home) / f"cloudguard-keeper-0-0-{'0' * 24}"
    left = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    left.bind(str(stale))
    left.close()
    Path(str(stale) + rendezvous.MARK_SUFFIX).touch()
    live = Keeper(str(armed_log), 0)
    try:
        assert stale.is_socket() is False, "a killed keeper's socket was left"
        assert not Path(str(stale) + rendezvous.MARK_SUFFIX).exists()
        second = Keeper(str(armed_log), 0)  # sweeps again: the live one's channel stays
        second.close()
        assert Path(live.path).is_socket(), "a live keeper's channel was swept"
        reach.unregister_local(live.address)  # through its path, not to this process's table
        record = reach.reach_record(via="t", argv=["t"], target="t")
        assert reach.deliver(live.path, record) is None and len(live.records) == 1
    finally:
        live.close()
    assert not Path(live.path).exists(), "a keeper leaves its channel behind when it closes"


# In a network namespace of the test's own (nothing else on the host sees the name): a process
# of the caller's own pid namespace binds the hard seal's SEAL_KEEPERS name and tells a keeper
# of its own making, as a command could in a network namespace it made inside the seal.
SQUAT = """
import json, socket, threading
from cloudguard.guard import channel, rendezvous
squat = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
squat.bind(b"\\0" + channel.SEAL_KEEPERS.encode())
squat.listen(8)
def tell():
    while True:
        connection, _ = squat.accept()
        connection.send(b"@cloudguard-keeper-0-0-" + b"f" * 24)
        connection.close()
threading.Thread(target=tell, daemon=True).start()
print(json.dumps(rendezvous.around_seal()))
"""


def test_a_seal_keepers_name_told_by_a_process_the_caller_can_see_is_tampering() -> None:
    result = subprocess.run(
        ["unshare", "-rn", sys.executable, "-c", SQUAT],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    addresses, problem = json.loads(result.stdout)
    assert addresses == [] and "a squat" in problem, broken(
        "a-squatted-seal-name-is-tampering",
        f"a keeper of the command's making was taken for the seal's: {result.stdout}",
    )
