"""The Azure adapter's own options: flags of `cloudguard audit` and keys of `[audit]`.

Declared here, delivered in `SweepRequest.settings` (read with `ENGINE.value_in`):
the core knows nothing of them beyond their declaration.
"""

from __future__ import annotations

from cloudguard.cloud.options import LIVE_PANEL, choice, declare

ENGINES = ("auto", "arm", "resource-graph")  # how the sweep lists a tenant's VMs

ENGINE = declare(
    "engine",
    parse=choice(ENGINES),
    default="auto",
    metavar="ENGINE",
    help="Azure: auto|arm|resource-graph: sweep with per-subscription ARM listings (arm) or "
    "with Resource Graph (default auto: Resource Graph above 100 subscriptions).",
    panel=LIVE_PANEL,
)

OPTIONS = (ENGINE,)
