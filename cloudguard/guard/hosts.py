"""Which hosts are clouds, which are metadata services, which are loopback.

Facts, not probes: a name is judged by its spelling and an address by its
bytes; nothing here resolves a name or opens a connection. Stdlib only.
"""

from __future__ import annotations

import socket

# Registrable domains of cloud control planes, data planes and token endpoints.
# A host is a cloud host when it equals one of these or ends in "." + one.
CLOUD_DOMAINS: tuple[str, ...] = (
    # AWS: every service endpoint, China partition, dual-stack, Lambda URLs, SSO, console.
    "amazonaws.com",
    "amazonaws.com.cn",
    "api.aws",
    "on.aws",
    "aws.amazon.com",
    "awsapps.com",
    "amazoncognito.com",
    # Azure: ARM (management.azure.com), Entra ID tokens, storage, vaults, registries,
    # sovereign clouds (US Gov, China).
    "azure.com",
    "azure.net",
    "windows.net",
    "microsoftonline.com",
    "microsoftonline.us",
    "login.microsoft.com",
    "graph.microsoft.com",
    "azurecr.io",
    "azure-api.net",
    "azurewebsites.net",
    "azurefd.net",
    "azmk8s.io",
    "usgovcloudapi.net",
    "azure.us",
    "chinacloudapi.cn",
    # Google Cloud: every API, OAuth, metadata server.
    "googleapis.com",
    "accounts.google.com",
    "metadata.google.internal",
)

# Names that only ever mean an instance-metadata service.
METADATA_NAMES: frozenset[str] = frozenset({"metadata", "metadata.google.internal"})

# Instance-metadata and credential endpoints, by address.
METADATA_ADDRESSES: tuple[str, ...] = (
    "169.254.169.254",  # AWS IMDS, Azure IMDS, GCP metadata, and most others
    "fd00:ec2::254",  # AWS IMDS over IPv6
    "169.254.170.2",  # AWS ECS task credentials
    "169.254.170.23",  # AWS EKS Pod Identity
    "fd00:ec2::23",  # AWS EKS Pod Identity over IPv6
    "168.63.129.16",  # Azure WireServer (VM agent, extensions, health)
)


def _packed(address: str) -> bytes | None:
    """The address as bytes (IPv4-mapped IPv6 as IPv4), or None when it is not an address."""
    text = address.strip("[]").split("%", 1)[0]
    try:
        packed = socket.inet_pton(socket.AF_INET6, text)
    except (OSError, ValueError):
        try:
            # inet_aton also reads the short and decimal spellings ("2852039166").
            return socket.inet_aton(text) if text and text[-1:].isalnum() else None
        except (OSError, ValueError):
            return None
    if packed[:12] == b"\0" * 10 + b"\xff\xff":
        return packed[12:]
    return packed


_METADATA_PACKED = frozenset(p for p in map(_packed, METADATA_ADDRESSES) if p is not None)
_LOOPBACK6 = socket.inet_pton(socket.AF_INET6, "::1")


def normalize(host: str | bytes | None) -> str:
    if host is None:
        return ""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return host.strip().strip("[]").rstrip(".").lower()


def is_loopback(host: str | bytes | None) -> bool:
    """127.0.0.0/8, ::1 (and its IPv4-mapped form), `localhost` and `*.localhost`."""
    name = normalize(host)
    if name == "localhost" or name.endswith(".localhost"):
        return True
    packed = _packed(name) if name else None
    if packed is None:
        return False
    return packed[0] == 127 if len(packed) == 4 else packed == _LOOPBACK6


def is_metadata(host: str | bytes | None) -> bool:
    name = normalize(host)
    if name in METADATA_NAMES:
        return True
    packed = _packed(name) if name else None
    return packed is not None and packed in _METADATA_PACKED


def is_cloud_name(host: str | bytes | None) -> bool:
    name = normalize(host)
    return any(name == domain or name.endswith("." + domain) for domain in CLOUD_DOMAINS)


def is_guarded(host: str | bytes | None) -> bool:
    """What the socket guard refuses: a cloud host name or a metadata endpoint."""
    return is_metadata(host) or is_cloud_name(host)
