"""The AWS adapter's own options: flags of `cloudguard audit` and keys of `[audit]`.

Declared here, delivered in `SweepRequest.settings` (read with `Option.value_in`):
the core knows nothing of them beyond their declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cloudguard.cloud.options import (
    LIVE_PANEL,
    NeedsTrust,
    OptionValueError,
    choice,
    declare,
    string,
)

ACCOUNTS_FROM_CHOICES = ("organizations",)  # where the sweep finds more accounts

ACCOUNTS_FROM = declare(
    "accounts_from",
    parse=choice(ACCOUNTS_FROM_CHOICES),
    default=None,
    # A short metavar, the choice in the help: a long one squeezes the panel's help column
    # at 80 columns (issue 36: 401 lines of help).
    metavar="SOURCE",
    help="AWS: organizations: sweep every active account of the organization (needs "
    "--assume-role).",
    panel=LIVE_PANEL,
    trust=NeedsTrust("reads every account of the organization with your credentials"),
)
ASSUME_ROLE = declare(
    "assume_role",
    parse=string,
    default=None,
    metavar="NAME",
    help="AWS: role assumed in each member account (arn:aws:iam::<id>:role/NAME).",
    panel=LIVE_PANEL,
    trust=NeedsTrust("chooses the role your credentials assume in each account"),
)

AWS_ENGINES = ("auto", "tagging", "resource-explorer")  # where resources other than EC2's come from

AWS_ENGINE = declare(
    "aws_engine",
    parse=choice(AWS_ENGINES),
    default="auto",
    metavar="ENGINE",
    help="AWS: auto|tagging|resource-explorer: read every tagged resource with the "
    "Tagging API in each region, or with one Resource Explorer search of its aggregator "
    "index (auto, the default: the index where one is set up).",
    panel=LIVE_PANEL,
)
RESOURCE_EXPLORER_ENDPOINT = declare(
    "resource_explorer_endpoint",
    parse=string,
    default=None,
    metavar="URL",
    help="AWS: Resource Explorer's endpoint (not used when --management-endpoint is given "
    "and this is not).",
    panel=LIVE_PANEL,
    trust=NeedsTrust("chooses where your credentials are sent"),
)
PRICE_LIST_ENDPOINT = declare(
    "price_list_endpoint",
    parse=string,
    default=None,
    metavar="URL",
    help="AWS: the Price List Query API's endpoint (not used when --management-endpoint is "
    "given and this is not).",
    panel=LIVE_PANEL,
    trust=NeedsTrust("chooses where your credentials are sent"),
)

OPTIONS = (ACCOUNTS_FROM, ASSUME_ROLE, AWS_ENGINE, RESOURCE_EXPLORER_ENDPOINT, PRICE_LIST_ENDPOINT)


def check_values(values: Mapping[str, Any]) -> None:
    """--accounts-from and --assume-role go together; either alone is a usage error (2)."""
    accounts_from, assume_role = ACCOUNTS_FROM.value_in(values), ASSUME_ROLE.value_in(values)
    if accounts_from is not None and not assume_role:
        raise OptionValueError(
            "--accounts-from organizations needs --assume-role NAME: the role to assume in "
            "each member account",
            flag="--assume-role",
        )
    if assume_role and accounts_from is None:
        raise OptionValueError(
            "--assume-role is used with --accounts-from organizations", flag="--assume-role"
        )
