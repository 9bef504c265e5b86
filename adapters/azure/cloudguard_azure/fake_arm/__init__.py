"""A protocol-faithful fake of Azure Resource Manager, served over TLS on loopback.

    with serve() as arm:
        arm.state.add_vm(SUB, "pilot", "vm-1", tags={"task-id": "t1"})
        client = ComputeManagementClient(arm.credential(), SUB, base_url=arm.base_url,
                                         connection_verify=arm.ca_pem)

`state` (model), `wire` (JSON shapes), `routes` (URLs) and `server` (HTTPS)
are separate modules, in the way moto separates models, responses and urls.
"""

from cloudguard_azure.fake_arm.credential import StaticTokenCredential
from cloudguard_azure.fake_arm.faults import Faults
from cloudguard_azure.fake_arm.server import FakeArm, FakeArmUnavailable, serve
from cloudguard_azure.fake_arm.state import ArmState

__all__ = ["ArmState", "FakeArm", "FakeArmUnavailable", "Faults", "StaticTokenCredential", "serve"]
