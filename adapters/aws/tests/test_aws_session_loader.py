"""Every boto3 session the adapter makes reads botocore's service models through one loader a
data path (cloudguard_aws.session.new_session): a member account's session, or another
`reap apply` in the same process, does not read EC2's 3 MB model again. Only models are
shared: each session keeps its own credentials, profile and configuration."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.loaders
import pytest
from botocore.exceptions import ProfileNotFound
from cloudguard_aws import session as aws_session
from cloudguard_aws.session import FAKE_KEYS, new_session


@pytest.fixture(autouse=True)
def _own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A config file of the test's own, and no loader from another test."""
    config = tmp_path / "config"
    config.write_text("[default]\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    monkeypatch.setattr(aws_session, "_LOADERS", {})
    yield config


def _ec2_model_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of EC2's service model each time botocore reads it from disk."""
    reads: list[str] = []
    load = botocore.loaders.JSONFileLoader.load_file

    def counted(loader: Any, file_path: str) -> Any:
        if "/ec2/" in file_path and file_path.endswith("service-2"):
            reads.append(file_path)
        return load(loader, file_path)

    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "load_file", counted)
    return reads


def _ec2_client(make_session: Callable[..., Any]) -> Any:
    return make_session(**FAKE_KEYS).client(
        "ec2", region_name="us-east-1", endpoint_url="http://127.0.0.1:9"
    )


def test_two_sessions_read_the_ec2_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _ec2_model_reads(monkeypatch)
    first, second = _ec2_client(new_session), _ec2_client(new_session)
    assert len(reads) == 1, reads
    # Each its own session: its own credentials.
    assert first.meta.region_name == second.meta.region_name == "us-east-1"
    assert first._request_signer._credentials is not second._request_signer._credentials


def test_control_sessions_of_their_own_read_it_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The count above can see a second read: boto3's own sessions make one."""
    reads = _ec2_model_reads(monkeypatch)
    _ec2_client(boto3.Session)
    _ec2_client(boto3.Session)
    assert len(reads) == 2, reads


def test_the_search_path_stays_as_long_however_many_sessions() -> None:
    new_session(**FAKE_KEYS)
    (loader,) = aws_session._LOADERS.values()
    paths = list(loader.search_paths)
    for _ in range(5):
        new_session(**FAKE_KEYS)
    assert loader.search_paths == paths
    assert any(path.endswith("boto3/data") for path in paths), paths


def test_a_profiles_own_data_path_is_read_for_it_alone(_own_config: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    (models / "cloudguardtest" / "2020-01-01").mkdir(parents=True)
    (models / "cloudguardtest" / "2020-01-01" / "service-2.json").write_text("{}")
    _own_config.write_text(f"[default]\n[profile custom]\ndata_path = {models}\n")
    assert "cloudguardtest" in new_session(profile_name="custom").get_available_services()
    assert "cloudguardtest" not in new_session().get_available_services()
    assert "cloudguardtest" in new_session(profile_name="custom").get_available_services()
    assert len(aws_session._LOADERS) == 2


def test_a_missing_profile_is_refused_as_boto3_refuses_it() -> None:
    with pytest.raises(ProfileNotFound):
        boto3.Session(profile_name="nowhere")  # the control: boto3's own session
    with pytest.raises(ProfileNotFound):
        new_session(profile_name="nowhere")
