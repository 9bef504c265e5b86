"""Which Azure credential a sweep uses, chosen by name (`--credential NAME`).

Default is azure-identity's `DefaultAzureCredential` chain. Naming one
credential narrows the sweep to exactly that identity, so an operator (or
CI) knows which one was used, and a missing one fails with a message that
says what was tried instead of falling through to some other identity.
`fake-arm` is a static token for the local fake ARM; it is refused unless
the management endpoint is a loopback address (a structural fact, not a
switch), so it can never carry a sweep to real Azure. The converse holds
too: a loopback endpoint is answered only by `fake-arm`. Whoever listens on
127.0.0.1 (any local user can) must never receive a real identity's token,
so a real credential with a loopback endpoint is refused before any token
is asked for.
"""

from __future__ import annotations

from typing import Any

# One rule for "loopback", the guard's: the kernel hands it to adapters.
from cloudguard.cloud.endpoints import is_loopback_endpoint as is_loopback

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
    """The named credential cannot be used here (unknown name, or fake-arm off loopback)."""


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
    if key == "fake-arm":
        if not is_loopback(endpoint):
            raise CredentialChoiceError(
                "credential 'fake-arm' answers only a loopback --management-endpoint "
                f"(got {endpoint or 'the public ARM endpoint'})"
            )
        from cloudguard_azure.fake_arm.credential import StaticTokenCredential

        return StaticTokenCredential()
    if is_loopback(endpoint):
        raise CredentialChoiceError(
            f"a loopback --management-endpoint ({endpoint}) is answered only by the 'fake-arm' "
            f"credential: credential {name or 'default'!r} would hand a real token to whoever "
            "listens there"
        )

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
