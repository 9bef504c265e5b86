"""The Google Cloud adapter's own options: flags of `cloudguard audit` and keys of `[audit]`.

Declared here, delivered in `SweepRequest.settings` (read with `Option.value_in`):
the core knows nothing of them beyond their declaration.
"""

from __future__ import annotations

import re

from cloudguard.cloud.options import (
    LIVE_PANEL,
    NeedsTrust,
    OptionValueError,
    declare,
    readable_file,
    string,
)

# Where Cloud Asset Inventory searches: a project (its id or number), a folder or an
# organization (numbers). A project id is 6-30 lower-case letters, digits and hyphens; an
# old domain-scoped one (`example.com:proj`) has a dot and a colon.
_SCOPE = re.compile(r"(?:projects/[a-z0-9.:-]+|folders/\d+|organizations/\d+)")


def scope(value: object) -> str:
    text = string(value).strip()
    if not _SCOPE.fullmatch(text):
        raise OptionValueError(
            f"{value!r} is not a scope: projects/ID, folders/NUMBER or organizations/NUMBER"
        )
    return text


GCP_SCOPE = declare(
    "gcp_scope",
    parse=scope,
    default=(),
    many=True,
    metavar="SCOPE",
    help="Google Cloud: projects/ID, folders/N or organizations/N to sweep (repeatable; "
    "--subscription ID is projects/ID).",
    panel=LIVE_PANEL,
    trust=NeedsTrust("chooses what your credentials read"),
)
GCP_KEY_FILE = declare(
    "gcp_key_file",
    parse=string,
    default=None,
    metavar="FILE",
    help="Google Cloud: a service-account key file to sweep with (default: application "
    "default credentials).",
    panel=LIVE_PANEL,
    path=True,
    check=readable_file,
    trust=NeedsTrust("chooses which of your identities is used"),
)

OPTIONS = (GCP_SCOPE, GCP_KEY_FILE)
