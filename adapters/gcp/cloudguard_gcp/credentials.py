"""Which Google identity a sweep uses, and where it may go (the kernel's one endpoint rule).

`--credential default` (or none): application default credentials
(`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth application-default login`, the
metadata server), or, with `--gcp-key-file FILE`, that service-account key.
`--credential fake-gcp`: a fixed token for a fake Google Cloud on loopback, good
nowhere else. Which may go where is cloudguard.cloud.endpoints' rule for every
cloud: `fake-gcp` only to a loopback `--management-endpoint`; a real identity
only to Google's own API hosts over HTTPS, never to loopback (whoever listens on
127.0.0.1 must never receive a real token) nor to an unknown host. The rule is
asked before anything of the identity is read: no key file is opened, no
application default credential looked up, no token asked for.
"""

from __future__ import annotations

import re
from typing import Any

from cloudguard.cloud.endpoints import CloudEndpoints, EndpointRefused, credential_for

FAKE = "fake-gcp"
# The hosts a real Google identity may be sent to with --management-endpoint: the two APIs
# the sweep reads (Compute's also answers under www.googleapis.com/compute/v1).
ENDPOINTS = CloudEndpoints(
    cloud="Google Cloud",
    fake_credential=FAKE,
    hosts=re.compile(r"(?:cloudasset|compute|www)\.googleapis\.com"),
    described="cloudasset.googleapis.com, compute.googleapis.com, www.googleapis.com",
)
CREDENTIALS: dict[str, str] = {
    "default": "application default credentials (GOOGLE_APPLICATION_CREDENTIALS, `gcloud auth "
    "application-default login`, the metadata server), or the --gcp-key-file key",
    FAKE: "a fixed token for a fake Google Cloud (loopback endpoints only)",
}
NAMES = tuple(CREDENTIALS)
# Read-only reads of both APIs; what the identity may read is its IAM roles' to say.
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
FAKE_TOKEN = "cloudguard-fake-gcp"


class CredentialRefused(Exception):
    """This identity cannot be used here: nothing is sent (the sweep did not run, 75)."""


def describe(name: str | None, key_file: str | None) -> str:
    return f"service-account key {key_file}" if key_file else (name or "default")


def build(name: str | None, key_file: str | None, endpoint: str | None) -> Any:
    """google-auth credentials for `name` (or the key file) at `endpoint`. Building them
    sends nothing: a real one asks for its token at the first request."""
    key = (name or "default").strip().lower()
    if key not in CREDENTIALS:
        raise CredentialRefused(f"unknown credential {name!r}; choose one of: {', '.join(NAMES)}")
    if key == FAKE and key_file:
        raise CredentialRefused(
            f"--gcp-key-file names a real identity; credential {FAKE!r} takes none"
        )
    try:
        fake = credential_for(
            ENDPOINTS, endpoint, name if not key_file else describe(name, key_file)
        )
    except EndpointRefused as refused:
        raise CredentialRefused(str(refused)) from None
    if fake:
        from google.oauth2.credentials import Credentials

        return Credentials(token=FAKE_TOKEN)  # no refresh token: it never asks for another
    if key_file:
        from google.oauth2 import service_account

        try:
            return service_account.Credentials.from_service_account_file(key_file, scopes=SCOPES)
        except (OSError, ValueError) as exc:
            raise CredentialRefused(f"service-account key {key_file}: {exc}") from None
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        credentials, _project = google.auth.default(scopes=SCOPES)
    except DefaultCredentialsError as exc:
        raise CredentialRefused(f"no application default credentials: {exc}") from None
    return credentials
