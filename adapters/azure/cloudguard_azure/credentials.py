"""Which Azure credential a sweep uses, chosen by name (`--credential NAME`).

Default is azure-identity's `DefaultAzureCredential` chain. Naming one
credential narrows the sweep to exactly that identity, so an operator (or
CI) knows which one was used, and a missing one fails with a message that
says what was tried instead of falling through to some other identity.
`fake-arm` is a static token for the local fake ARM. Which credential may
go to which endpoint is the cloud kernel's one rule for every adapter
(cloudguard.cloud.endpoints): `fake-arm` only to a loopback endpoint, and a
real credential only to Azure's own management endpoints over HTTPS, never
to loopback (whoever listens on 127.0.0.1 must never receive a real token)
nor to an unknown host; refused before any token is asked for.
"""

from __future__ import annotations

import re
from typing import Any

from cloudguard.cloud.endpoints import CloudEndpoints, EndpointRefused, credential_for

# Where a real Azure identity may go: ARM of the public and the sovereign clouds.
ENDPOINTS = CloudEndpoints(
    cloud="Azure",
    fake_credential="fake-arm",
    hosts=re.compile(r"management\.(azure\.com|usgovcloudapi\.net|chinacloudapi\.cn)"),
    described="management.azure.com, management.usgovcloudapi.net, management.chinacloudapi.cn",
)

# name -> what it is (shown in errors and docs)
CREDENTIALS: dict[str, str] = {
    "default": "DefaultAzureCredential (Environment, WorkloadIdentity, ManagedIdentity, "
    "SharedTokenCache, VisualStudioCode, AzureCli, AzurePowerShell, AzureDeveloperCli)",
    "environment": "EnvironmentCredential (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET "
    "or AZURE_CLIENT_CERTIFICATE_PATH)",
    "workload-identity": "WorkloadIdentityCredential (AZURE_FEDERATED_TOKEN_FILE, "
    "AZURE_TENANT_ID, AZURE_CLIENT_ID)",
    "managed-identity": "ManagedIdentityCredential (IMDS or IDENTITY_ENDPOINT)",
    "cli": "AzureCliCredential (`az login`)",
    "developer-cli": "AzureDeveloperCliCredential (`azd auth login`)",
    "powershell": "AzurePowerShellCredential (`Connect-AzAccount`)",
    "fake-arm": "a static token for cloudguard's fake ARM (loopback endpoints only)",
}


class CredentialChoiceError(ValueError):
    """The named credential cannot be used here (unknown name, or not at this endpoint)."""


def describe(name: str | None) -> str:
    key = name or "default"
    return CREDENTIALS.get(key, key)


def build(name: str | None, endpoint: str | None) -> Any:
    """A TokenCredential for `name`. Constructing one never contacts the network;
    azure-identity defers every token request to `get_token`."""
    key = (name or "default").strip().lower()
    if key not in CREDENTIALS:
        raise CredentialChoiceError(
            f"unknown credential {name!r}; choose one of: {', '.join(CREDENTIALS)}"
        )
    try:
        fake = credential_for(ENDPOINTS, endpoint, name)
    except EndpointRefused as refused:
        raise CredentialChoiceError(str(refused)) from None
    if fake:
        from cloudguard_azure.fake_arm.credential import StaticTokenCredential

        return StaticTokenCredential()

    import azure.identity as identity

    if key == "default":
        return identity.DefaultAzureCredential()
    if key == "environment":
        return identity.EnvironmentCredential()
    if key == "workload-identity":
        return identity.WorkloadIdentityCredential()
    if key == "managed-identity":
        return identity.ManagedIdentityCredential()
    if key == "cli":
        return identity.AzureCliCredential()
    if key == "developer-cli":
        return identity.AzureDeveloperCliCredential()
    return identity.AzurePowerShellCredential()
