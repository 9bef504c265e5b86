"""Under --hard the ambient roots are read-only inside: a write is refused where it happens
(EROFS) and recorded at the attempt, naming the path, the program and its test.

Every run is in an outer `unshare -rn` (hard_helpers). The roots: a masked
credential home (`~/.aws`, an empty read-only tmpfs inside), an application's
data root named by its variable (a read-only bind of itself), a root that
does not exist yet (`~/.azd`: nothing to mount, the gate alone refuses), and
a declared output inside the data root, writable.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from hard_helpers import hard_env, hard_run
from named_checks import broken

WRITER = """
import errno, os, subprocess, sys
home, data = os.environ["HOME"], os.environ["MYAPP_DATA_DIR"]
def attempt(name, write):
    try:
        write()
        print("WROTE", name)
    except OSError as error:
        print("REFUSED", name, errno.errorcode[error.errno])
attempt("aws", lambda: open(home + "/.aws/config", "a").write("planted"))
attempt("state", lambda: open(data + "/state.json", "w").write("{}"))
attempt("rename", lambda: os.rename(data + "/state.json", data + "/moved.json"))
attempt("azd", lambda: os.makedirs(home + "/.azd/auth"))
attempt("output", lambda: open(data + "/cache/fresh", "w").write("ok"))
attempt("free", lambda: open(os.environ["FREE"], "w").write("ok"))
# Not Python: a shell's redirection and coreutils meet the same refusal.
shell = 'echo x > "$MYAPP_DATA_DIR/by-shell"; mkdir "$MYAPP_DATA_DIR/dir"'
done = subprocess.run(["sh", "-c", shell])
print("SHELL", done.returncode)
"""
REGISTRY = """
[ambient.roots]
"$MYAPP_DATA_DIR" = "the application's data root"

[outputs]
"$MYAPP_DATA_DIR/cache" = "the suite's download cache"
"""


def digest(root: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted([root, *root.rglob("*")])
    }


def world(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    data = tmp_path / "appdata"
    env = hard_env(tmp_path, MYAPP_DATA_DIR=str(data), FREE=str(tmp_path / "free"))
    home = Path(env["HOME"])
    (home / ".aws").mkdir()
    (home / ".aws" / "config").write_text("[default]\nregion = eu-west-1\n")
    (data / "cache").mkdir(parents=True)
    (data / "state.json").write_text('{"count": 41}')
    registry = tmp_path / "registry.toml"
    registry.write_text(REGISTRY)
    return env, home, registry


def test_a_write_into_each_root_is_refused_inside_and_recorded_at_the_attempt(
    tmp_path: Path,
) -> None:
    env, home, registry = world(tmp_path)
    data = tmp_path / "appdata"
    before = {**digest(home / ".aws"), **digest(data / "state.json")}

    run = hard_run(
        tmp_path, sys.executable, "-c", WRITER,
        options=("--hard", "--registry", str(registry)), env=env,
    )  # fmt: skip

    records = {str(r["target"]): r for r in run.reaches() if r["via"] == "ambient-write"}
    refused = {
        str(home / ".aws" / "config"): "open for writing, refused",
        str(data / "state.json"): "open for writing, refused",  # then the rename, same path
        str(home / ".azd"): "mkdir, refused",  # a root that does not exist yet: the gate's
        str(data / "by-shell"): "open for writing, refused",
        str(data / "dir"): "mkdir, refused",
    }
    missing = sorted(set(refused) - set(records))
    assert not missing, broken(
        "a-write-is-recorded-at-the-attempt", f"not recorded: {missing}\n{run.output}"
    )
    for path, change in refused.items():
        record = records[path]
        assert (record["change"], record["found"]) == (change, "at the attempt"), record
        assert record["argv"] and record["pid"], record  # the program that tried, named
    lines = run.stdout.splitlines()
    for name in ("aws", "state", "rename", "azd"):
        assert f"REFUSED {name} EROFS" in lines, broken(
            "a-write-into-a-root-is-refused", f"the write {name} was not refused:\n{run.output}"
        )
    assert set(records) == set(refused), run.output
    assert run.returncode == 98, run.output
    assert {"WROTE output", "WROTE free", "SHELL 1"} <= set(lines), run.output
    assert {**digest(home / ".aws"), **digest(data / "state.json")} == before
    assert not (home / ".azd").exists() and not (data / "dir").exists()
    assert (data / "cache" / "fresh").read_text() == "ok", "the declared output stays writable"


MOUNTS = """
import os
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    print("MOUNT", fields[4], fields[5].split(",")[0])
"""


def test_each_existing_root_is_a_read_only_mount_inside_and_an_output_writable(
    tmp_path: Path,
) -> None:
    env, home, registry = world(tmp_path)
    data = tmp_path / "appdata"

    run = hard_run(
        tmp_path, sys.executable, "-c", MOUNTS,
        options=("--hard", "--registry", str(registry)), env=env,
    )  # fmt: skip

    mounts = dict(line.split()[1:] for line in run.stdout.splitlines() if line.startswith("MOUNT"))
    assert mounts.get(str(data)) == "ro", broken(
        "an-existing-root-is-read-only-inside", f"the data root is not:\n{run.output}"
    )
    assert mounts.get(str(home / ".aws")) == "ro", run.output  # the masked home's tmpfs
    assert mounts.get(str(data / "cache")) == "rw", run.output
    assert run.returncode == 0, run.output


SUITE = """
import os


def test_writes_the_data_root():
    try:
        open(os.environ["MYAPP_DATA_DIR"] + "/state.json", "w").write("{}")
    except OSError:
        pass  # swallowed: the record fails the test all the same


def test_clean():
    pass
"""


def test_under_hard_the_write_fails_the_test_that_made_it(tmp_path: Path) -> None:
    env, _, registry = world(tmp_path)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_roots.py").write_text(SUITE)

    run = hard_run(
        tmp_path, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite),
        options=("--hard", "--registry", str(registry)), env=env, timeout=120,
    )  # fmt: skip

    (record,) = [r for r in run.reaches() if r["via"] == "ambient-write"]
    assert record["test"].endswith("test_roots.py::test_writes_the_data_root"), record
    assert "1 failed, 1 passed" in run.stdout, run.output
    assert "this test wrote where a run must not write" in run.stdout, run.output
    assert run.returncode == 98, run.output
