"""Never silently off (issue 25, item 1): `cloudguard doctor` in a project, and required_plugins.

Outside a sealed run, doctor says whether pytest would seal this project's
tests: the plugin installed for the Python the tests run with (`--python`),
the configuration file pytest itself would read (by pytest's own rules: a
`pytest.ini` beside `pyproject.toml` wins, and the pyproject's settings are
ignored), `cloudguard = true` in it, nothing turning the plugin off, and
`required_plugins` naming `cloudguard-ci`, without which a test environment
that lacks the plugin only warns about an unknown option and runs every test
unguarded. That last claim is shown too, with a real pytest that lacks the
plugin.
"""

from __future__ import annotations

import subprocess
import venv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from guard_helpers import cloudguard, minimal_env
from named_checks import broken

ENABLED = '[tool.pytest.ini_options]\ncloudguard = true\nrequired_plugins = ["cloudguard-ci"]\n'


@dataclass(frozen=True)
class Project:
    files: Mapping[str, str]
    code: int
    says: str
    env: dict[str, str] = field(default_factory=dict)


PROJECTS = {
    "enabled and required": Project(
        {"pyproject.toml": ENABLED}, 0, "will seal every test session of this project"
    ),
    "pytest.toml (pytest 9)": Project(
        {"pytest.toml": '[pytest]\ncloudguard = true\nrequired_plugins = ["cloudguard-ci"]\n'},
        0,
        "required_plugins names cloudguard-ci",
    ),
    "a version in required_plugins": Project(
        {"pytest.ini": "[pytest]\ncloudguard = true\nrequired_plugins = cloudguard-ci>=0.1\n"},
        0,
        "will seal every test session",
    ),
    "enabled, not required": Project(
        {"pyproject.toml": "[tool.pytest.ini_options]\ncloudguard = true\n"},
        97,
        "required_plugins does not name cloudguard-ci",
    ),
    "a pytest.ini beside the pyproject wins": Project(
        {"pyproject.toml": ENABLED, "pytest.ini": "[pytest]\n"},
        97,
        "pytest.ini does not enable the plugin (cloudguard = true)",
    ),
    "turned off in addopts": Project(
        {"pyproject.toml": ENABLED + 'addopts = "-q -p no:cloudguard"\n'},
        97,
        "turns the plugin off (-p no:cloudguard)",
    ),
    "turned off in PYTEST_ADDOPTS": Project(
        {"pyproject.toml": ENABLED},
        97,
        "PYTEST_ADDOPTS turns the plugin off (-p no:cloudguard)",
        env={"PYTEST_ADDOPTS": "-pno:cloudguard"},
    ),
    "autoload off": Project(
        {"pyproject.toml": ENABLED},
        97,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD is set",
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    ),
    "autoload off, the plugin named": Project(
        {"pyproject.toml": ENABLED + 'addopts = "-p cloudguard.guard.pytest.plugin"\n'},
        0,
        "will seal every test session",
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    ),
    # What pytest is handed besides the file, read by pytest's own parser (issue 36).
    "overridden off in PYTEST_ADDOPTS": Project(
        {"pyproject.toml": ENABLED},
        97,
        "PYTEST_ADDOPTS sets -o cloudguard=false: the plugin is off, and pytest stops",
        env={"PYTEST_ADDOPTS": "-q --override-ini=cloudguard=false"},
    ),
    "overridden off in addopts": Project(
        {"pyproject.toml": ENABLED + 'addopts = "-o cloudguard=no"\n'},
        97,
        "addopts in",
    ),
    "the last override holds": Project(
        {"pyproject.toml": ENABLED},
        0,
        "will seal every test session",
        env={"PYTEST_ADDOPTS": "-o cloudguard=false -o cloudguard=true"},
    ),
    "PYTEST_ADDOPTS picks another file": Project(
        {"pyproject.toml": ENABLED, "ci.ini": "[pytest]\n"},
        97,
        "ci.ini does not enable the plugin",
        env={"PYTEST_ADDOPTS": "-c ci.ini"},
    ),
    "cloudguard = false": Project(
        {"pyproject.toml": ENABLED.replace("true", "false")}, 97, "does not enable the plugin"
    ),
    "no pytest configuration": Project({}, 97, "no pytest configuration file from here up"),
}


@pytest.mark.parametrize("project", PROJECTS.values(), ids=PROJECTS.keys())
def test_doctor_says_whether_pytest_would_seal_the_projects_tests(
    tmp_path: Path, project: Project
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    for name, text in project.files.items():
        (root / name).write_text(text)

    done = cloudguard("doctor", env=minimal_env(tmp_path, **project.env), cwd=root)

    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, project.says in done.stderr) == (project.code, True), broken(
        "doctor-says-whether-pytest-would-seal", f"exit {done.returncode}, said:\n{done.stderr}"
    )


@pytest.fixture(scope="module")
def python_without_the_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with pytest (and what it needs) but no cloudguard-ci: a team's test venv that
    never installed it. The packages are this environment's, linked, not downloaded."""
    where = tmp_path_factory.mktemp("without-plugin")
    venv.create(where, with_pip=False)
    site = next(where.glob("lib/python*/site-packages"))
    ours = Path(pytest.__file__).resolve().parents[1]
    for pattern in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py",
                    "pytest-*.dist-info", "pluggy-*.dist-info", "iniconfig-*.dist-info",
                    "packaging-*.dist-info", "pygments-*.dist-info"):  # fmt: skip
        for package in ours.glob(pattern):
            (site / package.name).symlink_to(package)
    return where / "bin" / "python"


def test_doctor_asks_the_python_the_tests_run_with(
    tmp_path: Path, python_without_the_plugin: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(ENABLED)

    done = cloudguard(
        "doctor", "--python", str(python_without_the_plugin), env=minimal_env(tmp_path),
        cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 97, done.stderr
    assert f"the plugin is not installed for {python_without_the_plugin}" in done.stderr
    here = cloudguard("doctor", env=minimal_env(tmp_path), cwd=tmp_path)
    assert here.returncode == 0, f"the control: installed here, it would load\n{here.stderr}"


SWALLOWED = """
import socket

def test_a_reach_swallowed():
    try:
        socket.getaddrinfo("management.azure.com", 443)
    except Exception:
        pass
"""


@pytest.mark.parametrize(
    ("ini", "code", "says"),
    [
        ("[pytest]\ncloudguard = true\n", 0, "Unknown config option: cloudguard"),
        (
            '[pytest]\ncloudguard = true\nrequired_plugins = ["cloudguard-ci"]\n',
            pytest.ExitCode.USAGE_ERROR,
            "Missing required plugins: cloudguard-ci",
        ),
    ],
    ids=["silently-off", "required"],
)
def test_required_plugins_stops_a_run_that_lacks_the_plugin(
    tmp_path: Path, python_without_the_plugin: Path, ini: str, code: int, says: str
) -> None:
    # In pytest.toml the list is TOML; a pytest without the plugin reads it the same way.
    (tmp_path / "pytest.toml").write_text(ini)
    (tmp_path / "test_team.py").write_text(SWALLOWED)

    command = [str(python_without_the_plugin), "-m", "pytest", "-p", "no:cacheprovider"]
    done = subprocess.run(
        ["unshare", "-rn", *command],
        cwd=tmp_path, env=minimal_env(tmp_path), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip

    assert (done.returncode, says in done.stdout + done.stderr) == (code, True), (
        done.stdout + done.stderr
    )
