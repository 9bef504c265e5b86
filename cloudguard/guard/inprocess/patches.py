"""Swap a function for its guarded wrapper once, and remember how to put it back."""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import`: typing costs every sealed Python child ~5 ms

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MARK = "__cloudguard_original__"

_swapped: list[tuple[object, str, object]] = []


def swap(owner: object, name: str, make: Callable[[Any], Any]) -> None:
    """Replace `owner.name` with `make(original)`; a second call is a no-op."""
    original = getattr(owner, name)
    if is_guarded(owner, name):
        return
    wrapper = make(original)
    setattr(wrapper, MARK, original)
    setattr(owner, name, wrapper)
    _swapped.append((owner, name, original))


def is_guarded(owner: object, name: str) -> bool:
    return getattr(getattr(owner, name, None), MARK, None) is not None


def restore_all() -> None:
    while _swapped:
        owner, name, original = _swapped.pop()
        setattr(owner, name, original)
