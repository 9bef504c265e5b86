"""In-process guards: judged at the socket (gRPC at its call), named by SDKs. Record, then refuse.

    from cloudguard.guard import inprocess
    inprocess.install(log="/path/to/armed.jsonl")

Installed by the pytest plugin in the test process and by the seal's
`sitecustomize` in every Python child started under a seal. Importing this
package imports no SDK and not `socket`: each guard declares the modules
whose import installs it (`declared`), and is patched in when (and if) they
are imported. Only the socket and gRPC guards refuse; the SDK hooks name the call
under way so the record says what it was (see `attempt`); gRPC, whose C-core
opens its own sockets, is judged where a call starts (`grpc_guard`). Loopback
endpoints are never refused; there is no switch that lets anything else
through.

Also here (each in its own words, the first line of its docstring):

- `azure_guard`: azure-core: name each Azure call for the socket guard; refuse nothing
  here.
- `botocore_guard`: botocore: name each AWS call for the socket guard; refuse nothing
  here.
- `google_guard`: google-auth: name each Google REST call and token fetch for the socket
  guard; refuse nothing.
- `grpc_guard`: gRPC: where a channel's C-core would start sending; record, then refuse a
  cloud target.
- `imports`: Patch a module when it is imported, without importing it ourselves.
- `patches`: Swap a function for its guarded wrapper once, and remember how to put it
  back.
- `refusal`: Record, then refuse: the one way an in-process guard says no.
- `socket_guard`: Where bytes would leave: the one place the in-process guards decide.
"""

from __future__ import annotations

from cloudguard.guard.inprocess import imports
from cloudguard.guard.inprocess.declared import DECLARED
from cloudguard.guard.inprocess.refusal import CloudReachRefused, bind, binding

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cloudguard.guard.policy import Policy

    # The guards' binding as `saved` keeps it: (log, policy, find_policy, keepers).
    Binding = tuple[str | None, Policy | None, Callable[[], Policy | None] | None, tuple[str, ...]]

__all__ = [
    "GUARDS",
    "CloudReachRefused",
    "hint",
    "install",
    "installed",
    "restore",
    "saved",
    "uninstall",
]

# Each guard's installation by the `via` it records. cloudguard's own negative controls replace
# an entry to prove the suite goes red without it; it is not a setting users have.
GUARDS: dict[str, Callable[[], None]] = {guard.via: guard.install for guard in DECLARED}

_installed: set[str] = set()


def install(
    *,
    log: str | None,
    policy: Policy | None = None,
    find_policy: Callable[[], Policy | None] | None = None,
    keepers: Sequence[str] = (),
) -> None:
    """Bind the reach log and install every guard (idempotent: a second call only rebinds).

    `keepers`: the record keepers records are delivered to (besides those the
    environment names). `policy` names the identity variables a record lists; without
    one, `find_policy` (a Python child's: rebuilt from the live seal) is asked on the
    first refusal.
    """
    bind(log, policy, find_policy, keepers)
    for name, guard in GUARDS.items():
        if name not in _installed:
            guard()
            _installed.add(name)


def installed() -> frozenset[str]:
    """The guards installed in this process (the SDK ones may still be waiting for an import)."""
    return frozenset(_installed)


def uninstall() -> None:
    """Put every patched function back (for a pytest run that ends inside a longer process)."""
    from cloudguard.guard.inprocess import patches  # not at start-up: a Python child never needs it

    for guard in DECLARED:
        for module in guard.triggers:
            imports.forget(module)
    patches.restore_all()
    _installed.clear()
    bind(None)


def saved() -> Binding | None:
    """The guards' binding now, when they are installed: what `restore` puts back."""
    if not _installed:
        return None
    return (binding.log, binding.policy, binding.find_policy, tuple(binding.keepers))


def restore(saved: Binding | None) -> None:
    """Put back what `saved` returned: rebind the guards, or remove them if there were none
    (a pytest session that ran inside a guarded process leaves the outer guards as they were)."""
    if saved is None:
        uninstall()
    else:
        log, policy, find_policy, keepers = saved
        install(log=log, policy=policy, find_policy=find_policy, keepers=keepers)


def hint(via: str) -> str | None:
    """The advice of the in-process guard whose records say `via`; None for another channel."""
    return next((guard.hint for guard in DECLARED if guard.via == via), None)
