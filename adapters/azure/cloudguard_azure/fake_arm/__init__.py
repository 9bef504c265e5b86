"""A protocol-faithful fake of Azure Resource Manager, served over TLS on loopback.

    with serve() as arm:
        arm.state.add_vm(SUB, "pilot", "vm-1", tags={"task-id": "t1"})
        client = ComputeManagementClient(arm.credential(), SUB, base_url=arm.base_url,
                                         connection_verify=arm.ca_pem)

One folder per ARM provider, as moto keeps one per service, each with its
state (`models`), its JSON shapes (`responses`) and its routes (`urls`):
`resources/` (subscriptions, resource groups), `compute/` (VMs, disks),
`network/` (NICs, public IPs), `authorization/` (locks), `resourcegraph/`
(the query). Shared: `state` (the one world, `ArmState`), `operations`
(long-running operations), `routing` and `wire` (what every provider's routes
and shapes share), `faults` (what the fake does wrong on purpose) and `server`
(HTTPS on 127.0.0.1).
"""

from cloudguard_azure.fake_arm.credential import StaticTokenCredential
from cloudguard_azure.fake_arm.faults import Faults
from cloudguard_azure.fake_arm.server import FakeArm, FakeArmUnavailable, serve
from cloudguard_azure.fake_arm.state import ArmState

__all__ = ["ArmState", "FakeArm", "FakeArmUnavailable", "Faults", "StaticTokenCredential", "serve"]
