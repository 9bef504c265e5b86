"""Each in-process guard is declared once (cloudguard/guard/inprocess/declared.py); the
package's tables derive from the declarations instead of repeating them."""

from __future__ import annotations

from importlib import import_module

import pytest

from cloudguard.guard import hints, inprocess
from cloudguard.guard.inprocess.declared import DECLARED, InProcessGuard


@pytest.mark.parametrize("guard", DECLARED, ids=lambda guard: guard.via)
def test_every_declared_hook_is_a_function_of_its_hook_module(guard: InProcessGuard) -> None:
    for module, hook in guard.triggers.items():
        hooks, _, function = hook.partition(":")
        found = getattr(import_module(f"cloudguard.guard.inprocess.{hooks}"), function, None)
        assert callable(found), f"{guard.via}: the hook {hook!r} for {module} is no function"


def test_the_installers_and_the_advice_derive_from_the_declarations() -> None:
    assert list(inprocess.GUARDS) == [guard.via for guard in DECLARED]
    for guard in DECLARED:
        assert hints.for_channel(guard.via) == guard.hint
        assert inprocess.hint(guard.via) == guard.hint
    assert inprocess.hint("az-shim") is None  # the control: a refuser's channel is not declared
