"""The GitHub Action's step: run the configured `cloudguard audit` once, then hand
its results to GitHub: the markdown report to the job summary, the SARIF to a
file (for github/codeql-action/upload-sarif), the exit code to the step outputs.

Stdlib only; run by action.yml with the Python of the venv cloudguard was
installed into. Reads the action's inputs as INPUT_* environment variables and
GitHub's files from GITHUB_STEP_SUMMARY, GITHUB_OUTPUT and RUNNER_TEMP.

Exit: the audit's own code (0 clean, 1 findings, 2 usage, 75 did not run, 97
invalid config), except that findings exit 0 when fail-on-findings is false.
A run that did not complete (75) always fails: "nothing found" is not known.

Trust: the action runs in a checkout, whose cloudguard.toml a pull request
may have written. The audit gets a trust store of its own, empty
(XDG_STATE_HOME under RUNNER_TEMP): no earlier step of the job (the PR's own
code, say) can have trusted the file for it. The workflow trusts the file by
its digest (`trusted-config-sha256`, the file it reviewed; anything else is
97) or names a file of its own in `args` (`--config`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

FINDINGS = 1
# The action owns where the reports go; the workflow configures what is audited.
OWNED = ("--format", "-f", "--output", "-o", "--report")


def audit_command(cloudguard: str, args: list[str], summary: Path, sarif: Path) -> list[str]:
    return [
        cloudguard, "audit", *args, "--format", "table",
        "--report", f"markdown={summary}", "--report", f"sarif={sarif}",
    ]  # fmt: skip


def trust_pinned(cloudguard: str, sha256: str, env: Mapping[str, str]) -> int:
    """Trust the checkout's cloudguard.toml for this audit only if it is the reviewed one."""
    print(f"+ cloudguard trust --sha256 {sha256}", flush=True)
    return subprocess.call([cloudguard, "trust", "--sha256", sha256], env=env)


def main(environ: Mapping[str, str]) -> int:
    args = shlex.split(environ.get("INPUT_ARGS", ""))
    owned = [a for a in args if a.split("=")[0] in OWNED]
    if owned:
        print(
            f"cloudguard action: `args` may not set {', '.join(owned)}: the action writes "
            "the markdown summary and the SARIF file itself (see the sarif-file input)",
            file=sys.stderr,
        )
        return 2
    temp = Path(environ.get("RUNNER_TEMP") or tempfile.mkdtemp(prefix="cloudguard-action-"))
    summary = temp / "cloudguard-audit.md"
    summary.unlink(missing_ok=True)
    sarif = Path(environ.get("INPUT_SARIF_FILE") or "cloudguard.sarif")
    cloudguard = environ.get("CLOUDGUARD_ACTION_BIN") or str(
        Path(sys.executable).parent / "cloudguard"
    )

    env = dict(os.environ, XDG_STATE_HOME=tempfile.mkdtemp(prefix="cloudguard-trust-", dir=temp))
    pinned = environ.get("INPUT_TRUSTED_CONFIG_SHA256", "").strip()
    code = trust_pinned(cloudguard, pinned, env) if pinned else 0
    if code == 0:
        print("+ " + shlex.join(audit_command("cloudguard", args, summary, sarif)), flush=True)
        code = subprocess.call(audit_command(cloudguard, args, summary, sarif), env=env)

    step_summary = environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as out:
            if summary.exists():
                out.write(summary.read_text(encoding="utf-8"))
            else:
                out.write(
                    f"## cloudguard audit\n\nThe audit wrote no report (exit {code}): "
                    "see the step's log.\n"
                )
    outputs = environ.get("GITHUB_OUTPUT")
    if outputs:
        with open(outputs, "a", encoding="utf-8") as out:
            out.write(f"exit-code={code}\n")
            out.write(f"sarif-file={sarif if sarif.exists() else ''}\n")
    if code == FINDINGS and environ.get("INPUT_FAIL_ON_FINDINGS", "true").lower() == "false":
        print("cloudguard action: findings reported; fail-on-findings is false, so exit 0")
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main(os.environ))
