"""A team's first commands: `cloudguard init`, `cloudguard adapters`, and shell completion.

`init` writes a commented cloudguard.toml from a few answers (options, or a
terminal's prompts) that the audit and the seal then read as they are, never
replaces a file without --force, refuses an answer the file would refuse, and
turns the pytest plugin on with `required_plugins` spelled as pytest matches
it (proven by pytest itself refusing to start without the plugin).
`adapters` lists what is installed; completion offers values, not only flags.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from cli_helpers import cloudguard
from named_checks import broken

from cloudguard.cloud import adapter_registry

CLOUDGUARD = Path(sys.executable).parent / "cloudguard"
PYTHON = Path(sys.executable)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()  # a repository root: no parent's cloudguard.toml applies
    (root / "pyproject.toml").write_text('[project]\nname = "lab"\nversion = "0"\n')
    monkeypatch.chdir(root)
    return root


def test_init_writes_a_commented_file_the_audit_reads_as_it_is(project: Path) -> None:
    done = cloudguard(
        "init", "--no-input", "--task-tag", "run-id", "--generation-tag", "commit",
        "--terraform-state", "infra/lab.tfstate", "--provider-variable", "LAB_PROVIDER_CMD",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    text = (project / "cloudguard.toml").read_text()
    assert 'task-tag = "run-id"' in text and 'terraform-state = ["infra/lab.tfstate"]' in text
    assert "# Terraform state: a resource whose cloud id is in it is owned." in text
    assert "[provider]\n# Variables your code reads" in text
    # The audit takes it as its own: the lab's tag names a fleet VM, its state owns it.
    (project / "infra").mkdir()
    vm_id = "/subscriptions/s/resourceGroups/lab/providers/Microsoft.Compute/virtualMachines/vm-1"
    (project / "infra" / "lab.tfstate").write_text(
        json.dumps(
            {
                "version": 4,
                "resources": [
                    {"mode": "managed", "type": "azurerm_linux_virtual_machine",
                     "instances": [{"attributes": {"id": vm_id}}]},
                ],
            }
        )
    )  # fmt: skip
    vm = {"id": vm_id, "name": "vm-1", "tags": {"run-id": "ci-42"}, "powerState": "VM running",
          "vmId": "u", "timeCreated": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    (project / "vms.json").write_text(json.dumps([vm]))
    audit = cloudguard("audit", "-i", "vms.json", "-f", "json")
    assert audit.exit_code == 0, audit.output
    (finding,) = json.loads(audit.stdout)["findings"]
    assert (finding["task_id"], finding["verdict"]) == ("ci-42", "ok")
    assert finding["reasons"] == ["owned-by-terraform-state"]


def test_init_says_where_the_history_lives_and_its_table_reads_uncommented(
    project: Path,
) -> None:
    assert cloudguard("init", "--no-input", "--owned-ids", "ids.txt").exit_code == 0
    text = (project / "cloudguard.toml").read_text()
    assert "history.sqlite3" in text and "# [history]\n# url-env = " in text
    (project / "ids.txt").write_text("")
    (project / "vms.json").write_text("[]")
    uncommented = text.replace("# [history]\n# url-env", "[history]\nurl-env")
    (project / "named.toml").write_text(uncommented)
    audit = ("audit", "-i", "vms.json", "--no-history", "--config", "named.toml")
    done = cloudguard(*audit)
    assert done.exit_code == 0, done.output
    # The control: the table is read, so a mistyped key in it is refused.
    (project / "named.toml").write_text(uncommented.replace("url-env =", "url-envv ="))
    typo = cloudguard(*audit)
    assert typo.exit_code == 97, typo.output
    assert "history.url-envv: unknown key" in typo.stderr


def test_init_never_replaces_a_file_without_force(project: Path) -> None:
    (project / "cloudguard.toml").write_text("# mine\n")
    done = cloudguard("init", "--no-input")
    kept = (project / "cloudguard.toml").read_text()
    assert kept == "# mine\n", broken(
        "an-existing-file-is-kept", f"an existing cloudguard.toml was replaced: {kept!r}"
    )
    assert done.exit_code == 2
    assert "cloudguard.toml exists: not replaced" in done.stderr
    # Nor through a link planted where it would go.
    (project / "cloudguard.toml").unlink()
    victim = project / "victim"
    victim.write_text("keep\n")
    (project / "cloudguard.toml").symlink_to(victim)
    assert cloudguard("init", "--no-input").exit_code == 2
    assert victim.read_text() == "keep\n"
    # The control: --force writes it (in place of the link, not through it).
    assert cloudguard("init", "--no-input", "--force").exit_code == 0
    assert victim.read_text() == "keep\n"
    assert not (project / "cloudguard.toml").is_symlink()
    assert "task-tag" in (project / "cloudguard.toml").read_text()


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (("--provider-variable", "PATH"), "provider variable 'PATH' cannot be bound"),
        (("--task-tag", " "), "task-tag: expected a tag name"),
        (("--terraform-state", ""), "Invalid value for --terraform-state: an empty path"),
    ],
)
def test_an_answer_the_file_would_refuse_is_usage_and_writes_nothing(
    project: Path, answer: tuple[str, str], says: str
) -> None:
    done = cloudguard("init", "--no-input", *answer)
    assert done.exit_code == 2, done.output
    assert says in done.stderr
    assert not (project / "cloudguard.toml").exists()
    assert not list(project.glob(".cloudguard-init-*"))


def test_init_turns_the_plugin_on_and_pytest_refuses_to_run_without_it(project: Path) -> None:
    assert cloudguard("init", "--no-input").exit_code == 0
    assert 'required_plugins = ["cloudguard-ci"]' in (project / "pyproject.toml").read_text()
    (project / "test_lab.py").write_text("def test_nothing():\n    pass\n")

    def pytest_in_project(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_lab.py"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )

    with_plugin = pytest_in_project()
    assert with_plugin.returncode == 0, with_plugin.stdout + with_plugin.stderr
    without = pytest_in_project("-p", "no:cloudguard")  # as if cloudguard-ci were missing
    assert without.returncode == 4, without.stdout + without.stderr
    assert "Missing required plugins: cloudguard-ci" in without.stdout + without.stderr


def test_init_never_edits_a_pytest_table_it_did_not_write(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.pytest.ini_options]\naddopts = "-q"\n')
    done = cloudguard("init", "--no-input")
    assert done.exit_code == 0
    assert pyproject.read_text() == '[tool.pytest.ini_options]\naddopts = "-q"\n'
    assert "add to [tool.pytest.ini_options]" in done.stdout
    assert 'required_plugins = ["cloudguard-ci"]' in done.stdout
    # A pytest.ini wins over pyproject.toml: the lines are for it.
    (project / "cloudguard.toml").unlink()
    (project / "pytest.ini").write_text("[pytest]\n")
    assert "add to pytest.ini" in cloudguard("init", "--no-input").stdout


def test_init_asks_on_a_terminal(project: Path) -> None:
    answers = ["lab-run", "-", "3", "state/lab.tfstate", "LAB_CMD, LAB_CMD_2"]
    code, shown = _on_a_terminal(project, ["init", "--no-pytest"], answers)
    assert code == 0, shown
    assert "What knows which resources your fleet owns?" in shown
    text = (project / "cloudguard.toml").read_text()
    assert 'task-tag = "lab-run"' in text and "generation-tag" not in text
    assert 'terraform-state = ["state/lab.tfstate"]' in text
    assert 'variables = ["LAB_CMD", "LAB_CMD_2"]' in text
    assert "repo =" not in text  # no generation tag: nothing to check it against


def _on_a_terminal(cwd: Path, args: list[str], answers: list[str]) -> tuple[int, str]:
    """`cloudguard ARGS` on a pseudo-terminal, answering each prompt in turn."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, on the terminal
        os.chdir(cwd)
        os.execv(CLOUDGUARD, [str(CLOUDGUARD), *args])
    shown, pending = b"", list(answers)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break  # the command ended: the terminal closed
        if not chunk:
            break
        shown += chunk
        if pending and shown.rstrip().endswith(b":"):
            os.write(fd, pending.pop(0).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")


def test_adapters_lists_what_is_installed_and_whether_it_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done = cloudguard("adapters")
    assert done.exit_code == 0
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["provider", "distribution", "version", "options", "loads"]
    azure = next(line.split() for line in lines if line.startswith("azure"))
    assert azure == [
        "azure", "cloudguard-azure", "0.1.0", "--engine,", "--retail-prices-endpoint", "yes"
    ]  # fmt: skip
    # One that does not load says why (and the others still list).
    broken = EntryPoint("broken", "cloudguard_no_such_module:Adapter", "cloudguard.adapters")
    installed = {**adapter_registry.installed_adapters(), "broken": broken}
    monkeypatch.setattr(adapter_registry, "installed_adapters", lambda: installed)
    import cloudguard.cli.adapters as command

    monkeypatch.setattr(command, "installed_adapters", lambda: installed)
    listed = cloudguard("adapters").stdout
    assert "no: cannot load cloudguard_no_such_module:Adapter" in listed
    assert any(line.startswith("azure") and line.endswith("yes") for line in listed.splitlines())


@pytest.mark.parametrize(
    ("words", "offered"),
    [
        ("cloudguard audit --format ", ["table", "json", "markdown", "junit", "sarif", "html"]),
        ("cloudguard audit --provider a", ["aws", "azure"]),
        ("cloudguard audit --fail-on ", ["orphan", "suspect", "unverified", "new"]),
        ("cloudguard audit --engine ", ["auto", "arm", "resource-graph"]),
        ("cloudguard audit --report s", ["sarif="]),
        ("cloudguard reap plan --verdict ", ["orphan", "leaked"]),
        ("cloudguard reap plan --action ", ["deallocate", "delete"]),
    ],
)
def test_completion_offers_values(words: str, offered: list[str]) -> None:
    env = dict(os.environ, _CLOUDGUARD_COMPLETE="complete_bash", COMP_WORDS=words)
    env["COMP_CWORD"] = str(len(words.split(" ")) - 1)
    done = subprocess.run([CLOUDGUARD], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == offered
