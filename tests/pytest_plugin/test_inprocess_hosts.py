"""What the socket guard calls a cloud, a metadata endpoint, or loopback: spelling, not probing."""

from __future__ import annotations

import pytest

from cloudguard.guard import hosts


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",
        "2852039166",  # 169.254.169.254 as one decimal number
        "::ffff:169.254.169.254",
        "fd00:ec2::254",
        "[FD00:0EC2:0:0:0:0:0:254]",
        "169.254.170.2",
        "168.63.129.16",
        "metadata.google.internal",
        "metadata.google.internal.",
        "metadata",
    ],
)
def test_metadata_endpoints(host):
    assert hosts.is_metadata(host) and hosts.is_guarded(host)
    assert not hosts.is_loopback(host)


@pytest.mark.parametrize(
    "host",
    [
        "s3.amazonaws.com",
        "STS.US-EAST-1.AMAZONAWS.COM",
        "ec2.cn-north-1.amazonaws.com.cn",
        "management.azure.com",
        "login.microsoftonline.com",
        "myaccount.blob.core.windows.net",
        "myvault.vault.azure.net",
        "oauth2.googleapis.com",
        "compute.googleapis.com",
        b"management.azure.com",
    ],
)
def test_cloud_host_families(host):
    assert hosts.is_cloud_name(host) and hosts.is_guarded(host)


@pytest.mark.parametrize(
    "host",
    ["example.com", "notamazonaws.com", "azure.com.example.org", "10.0.0.1", "github.com", ""],
)
def test_everything_else_is_not_the_socket_guards_business(host):
    assert not hosts.is_guarded(host)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "::ffff:127.0.0.1", "localhost", "a.localhost"],
)
def test_loopback(host):
    assert hosts.is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "10.0.0.1", "localhost.example.com", "", None])
def test_not_loopback(host):
    assert not hosts.is_loopback(host)
