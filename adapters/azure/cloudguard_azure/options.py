"""The Azure adapter's own options: flags of `cloudguard audit` and keys of `[audit]`.

Declared here, delivered in `SweepRequest.settings` (read with `Option.value_in`):
the core knows nothing of them beyond their declaration.
"""

from __future__ import annotations

from cloudguard.cloud.options import LIVE_PANEL, NeedsTrust, choice, declare, string

ENGINES = ("auto", "arm", "resource-graph")  # how the sweep lists a tenant's VMs

ENGINE = declare(
    "engine",
    parse=choice(ENGINES),
    default="auto",
    metavar="auto|arm|resource-graph",
    help="Azure: sweep with per-subscription ARM listings or with Resource Graph "
    "(default auto: Resource Graph above 100 subscriptions).",
    panel=LIVE_PANEL,
)

RETAIL_PRICES_ENDPOINT = declare(
    "retail_prices_endpoint",
    parse=string,
    default=None,
    metavar="URL",
    help="Azure: where the Retail Prices API is read (default https://prices.azure.com; "
    "not read at all when --management-endpoint is another endpoint and this is not given).",
    panel=LIVE_PANEL,
    # No credential goes there, but it learns which sizes the fleet runs where, and its
    # answers are the report's figures.
    trust=NeedsTrust("chooses who is asked for prices and whose figures the report shows"),
)

OPTIONS = (ENGINE, RETAIL_PRICES_ENDPOINT)
