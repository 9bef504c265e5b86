"""One settings boundary (cloudguard.settings.engine_requests), for `audit` and `reap apply` alike.

Both commands resolve the same `[audit]` table; each request carries the
options its command takes, and an option the command does not show keeps
its default there (the audit's `--region` never changes what `reap apply`
reads); the retry budget is both commands'.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.options import AUDIT, REAP_APPLY
from cloudguard.settings import engine_requests
from cloudguard.settings.core_options import Settings
from cloudguard.settings.resolve import resolve

CONFIG = """[audit]
retries = 25
credential = "cli"
engine = "resource-graph"
accounts-from = "organizations"
assume-role = "auditor"
controller-home = "home"
grace = "30m"
fail-on = "suspect"
"""


def _settings(tmp_path: Path, command: str) -> tuple[Settings, Clouds]:
    config = tmp_path / "cloudguard.toml"
    config.write_text(CONFIG)
    clouds = Clouds.installed()
    return resolve(command, {"region": ["eastus"]}, config, clouds), clouds


def test_the_audit_takes_every_option_it_shows(tmp_path: Path) -> None:
    settings, clouds = _settings(tmp_path, AUDIT)
    azure = engine_requests.sweep_request(settings, clouds.cloud("azure"))
    aws = engine_requests.sweep_request(settings, clouds.cloud("aws"))
    assert (azure.retries, azure.credential, azure.regions) == (25, "cli", ("eastus",))
    # each cloud gets its own, only
    assert azure.settings == {"engine": "resource-graph", "retail_prices_endpoint": None}
    assert aws.settings == {
        "accounts_from": "organizations",
        "assume_role": "auditor",
        "aws_engine": "auto",
        "resource_explorer_endpoint": None,
        "price_list_endpoint": None,
    }
    policy = engine_requests.audit_policy(settings)
    assert (policy.grace, policy.fail_on) == (timedelta(minutes=30), "suspect")
    evidence = engine_requests.evidence_request(settings)
    assert evidence.values["controller_home"] == str(tmp_path / "home")


def test_reap_apply_takes_only_what_it_shows_from_the_same_table(tmp_path: Path) -> None:
    settings, clouds = _settings(tmp_path, REAP_APPLY)
    azure = engine_requests.sweep_request(settings, clouds.cloud("azure"))
    assert azure.credential == "cli"  # shared: reaping uses the audit's identity
    # The retry budget is shared (reads are retried alike); regions are the audit's own.
    assert (azure.retries, azure.regions) == (25, ())
    assert azure.settings == {}  # --engine is the audit's
    policy = engine_requests.audit_policy(settings)
    assert (policy.grace, policy.fail_on) == (timedelta(minutes=30), "orphan")
    evidence = engine_requests.evidence_request(settings)
    assert evidence.values["controller_home"] == str(tmp_path / "home")
