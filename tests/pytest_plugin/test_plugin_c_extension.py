"""A C extension that connects through Python's socket module is refused and recorded too."""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from cloudguard import exit_codes

SOURCE = Path(__file__).with_name("cext") / "cext_connect.c"

INNER = """
# ruff: noqa
import socket
import sys

sys.path.insert(0, {build!r})
import cext_connect


def test_c_extension_swallowed():
    assert socket.cloudguard_test_fence  # never call out without the offline fence beneath
    try:
        cext_connect.connect_to("169.254.169.254", 80)
    except Exception:
        pass


def test_clean_after_c_extension():
    pass
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension compiled against this interpreter's headers, as pip would build it."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    include = Path(sysconfig.get_paths()["include"])
    if compiler is None or not (include / "Python.h").exists():
        # A proof that skips proves nothing: CI installs a compiler (.ci/run), so fail here.
        pytest.fail(
            f"the C-extension proof needs a C compiler (cc: {compiler or 'missing'}) and "
            f"Python headers ({include / 'Python.h'}): install them (e.g. apt-get install gcc "
            "libc6-dev); .ci/run does",
            pytrace=False,
        )
    build = tmp_path_factory.mktemp("cext")
    target = build / f"cext_connect{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run(
        [compiler, "-shared", "-fPIC", f"-I{include}", "-o", str(target), str(SOURCE)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return build


def test_a_c_extension_connecting_through_the_socket_module_fails_its_test(fenced, built):
    fenced.makepyfile(test_cext=INNER.format(build=str(built)))

    result = fenced.runpytest_subprocess("-p", "no:cacheprovider", "--cloudguard")

    result.assert_outcomes(failed=1, passed=1)
    assert result.ret == exit_codes.REACH_REFUSED
    assert "socket -> 169.254.169.254:80" in result.stdout.str()


def test_without_the_plugin_the_swallowed_c_extension_call_would_pass(fenced, built):
    """The hazard is real: the exception is swallowed and nothing else notices."""
    fenced.makepyfile(test_cext=INNER.format(build=str(built)))

    result = fenced.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:cloudguard")

    result.assert_outcomes(passed=2)
