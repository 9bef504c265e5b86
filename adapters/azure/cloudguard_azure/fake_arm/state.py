"""The fake ARM's one world: every provider's state, in one store, behind one lock.

Each ARM provider keeps its records and transitions in its own folder
(`resources/`, `compute/`, `network/`, `authorization/`), as moto keeps a
service's models apart from its responses and urls. `ArmState` holds their
records and gathers their seeding and reading functions as its methods, so a
test or the demo seeds one object: `arm.state.add_vm(SUB, "pilot", "vm-1")`.
Nothing here knows about HTTP or JSON.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from cloudguard_azure.fake_arm import operations
from cloudguard_azure.fake_arm.compute import models as compute
from cloudguard_azure.fake_arm.resources import models as resources
from cloudguard_azure.fake_arm.retailprices import models as retailprices

if TYPE_CHECKING:
    from cloudguard_azure.fake_arm.authorization.models import ManagementLock
    from cloudguard_azure.fake_arm.compute.models import ManagedDisk, VirtualMachine
    from cloudguard_azure.fake_arm.network.models import NetworkInterface, PublicIp
    from cloudguard_azure.fake_arm.operations import Operation
    from cloudguard_azure.fake_arm.resources.models import GenericResource, Subscription
    from cloudguard_azure.fake_arm.retailprices.models import Meter


class ArmState:
    """Everything the fake serves. Thread-safe: the server is threaded."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.subscriptions: dict[str, Subscription] = {}  # key: casefolded id
        self.vms: dict[str, VirtualMachine] = {}  # key: casefolded ARM id
        self.disks: dict[str, ManagedDisk] = {}
        self.nics: dict[str, NetworkInterface] = {}
        self.public_ips: dict[str, PublicIp] = {}
        self.generic: dict[str, GenericResource] = {}  # any other type, by casefolded id
        self.locks: list[ManagementLock] = []  # Microsoft.Authorization/locks, any scope
        self.retail_prices: list[Meter] = retailprices.catalogue()  # the public price list
        self.operations: dict[str, Operation] = {}
        # How many polls an LRO stays InProgress: 1 shows the SDK really polls.
        self.polls_until_done = 1
        # While set, every LRO stays InProgress however often it is polled: a test holds an
        # action in flight until it has done what must happen meanwhile (a barrier, no timing).
        self.hold_operations = False
        # Resources ARM lists but does not yet answer for: a GET of the very resource (by its
        # casefolded id) answers 404 ResourceNotFound this many more times, as ARM does for a
        # moment after a resource is created (its listing's cache is ahead of its provider).
        self.settling: dict[str, int] = {}

    def settle_after(self, resource_id: str, reads: int = 1) -> None:
        """The next `reads` GETs of `resource_id` itself answer 404 ResourceNotFound."""
        with self.lock:
            self.settling[resource_id.rstrip("/").casefold()] = reads

    def take_settling(self, path: str) -> bool:
        """Whether this GET of `path` is one still answered "not found" (and count it)."""
        key = path.rstrip("/").casefold()
        with self.lock:
            left = self.settling.get(key, 0)
            if left <= 0:
                return False
            self.settling[key] = left - 1
            return True

    # Microsoft.Resources
    add_subscription = resources.add_subscription
    add_group = resources.add_group
    subscription = resources.subscription
    add_resource = resources.add_resource
    # Microsoft.Compute
    add_vm = compute.add_vm
    add_disk = compute.add_disk
    seed_fleet = compute.seed_fleet
    vms_in = compute.vms_in
    disks_in = compute.disks_in
    vm = compute.vm
    disk = compute.disk
    begin_deallocate = compute.begin_deallocate
    begin_delete = compute.begin_delete
    begin_delete_disk = compute.begin_delete_disk
    # Long-running operations, every provider's
    poll = operations.poll
