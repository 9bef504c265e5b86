"""No secret is ever recorded: a table of real secret-bearing command lines.

Each line comes from the az, aws, gcloud or azcopy references with real
option names and a fake value. Redaction judges an argument by what it is
(cloudguard/guard/redaction.py), so none of the values may appear in the record,
in the refusing shim's stdout/stderr, or in the pytest failure text.
"""

from __future__ import annotations

import pytest
from inner_runs import INNER
from named_checks import broken
from secret_lines import SECRET_LINES, fake_values

from cloudguard.documents import reach_log
from cloudguard.guard import redaction

HERE = INNER.parent


def test_the_table_covers_every_tool_with_at_least_thirty_lines():
    assert len(SECRET_LINES) >= 30
    assert {line[0] for line in SECRET_LINES} == {"az", "aws", "gcloud", "azcopy"}
    assert all(fake_values(line) for line in SECRET_LINES)


@pytest.mark.parametrize("line", SECRET_LINES, ids=lambda line: " ".join(line[:4]))
def test_no_secret_value_survives_redaction(line):
    shown = " ".join(redaction.redact_argv(line))

    survived = [value for value in fake_values(line) if value in shown]
    assert survived == [], broken("no-secret-survives", f"{survived} survived redaction: {shown}")
    assert shown.split()[:2] == list(line[:2])  # the command itself stays readable


INNER_SUITE = """
import subprocess
import pytest
from secret_lines import SECRET_LINES

@pytest.mark.parametrize("line", SECRET_LINES)
def test_shim(line):
    done = subprocess.run(list(line), capture_output=True, text=True, timeout=60)
    print(done.stdout, done.stderr)  # the shim's own output, into the failure text
    assert done.returncode == 98
"""


def test_no_secret_value_reaches_the_log_the_terminal_or_the_failure_text(fenced, tmp_path):
    fenced.makepyfile(
        secret_lines=(HERE / "secret_lines.py").read_text(), test_secret_shims=INNER_SUITE
    )
    log = tmp_path / "reach.jsonl"

    result = fenced.runpytest_subprocess("--cloudguard", f"--cloudguard-log={log}", "-rA")

    result.assert_outcomes(failed=len(SECRET_LINES))  # each line reached through its shim
    records = reach_log.read(str(log)).reaches
    assert sorted(r["via"] for r in records) == sorted(f"{line[0]}-shim" for line in SECRET_LINES)
    everything = log.read_text() + result.stdout.str() + result.stderr.str()
    assert "cloudguard: refused `" in everything  # the shims' stderr is in the text searched
    values = [value for line in SECRET_LINES for value in fake_values(line)]
    leaked = [value for value in values if value in everything]
    assert leaked == [], f"secret values leaked: {leaked}"
