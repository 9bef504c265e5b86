"""The `cloudguard` fixture: this test's reaches, and `expect` for a test that asserts one."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from cloudguard.guard.pytest.session_guard import GUARD, SessionGuard, TestWindow

Record = Mapping[str, object]


class CloudGuard:
    """The current test's reaches, as the plugin sees them."""

    def __init__(self, guard: SessionGuard, nodeid: str) -> None:
        self._guard = guard
        self._nodeid = nodeid

    def _window(self) -> TestWindow:
        __tracebackhide__ = True  # the plugin's helpers: pytest leaves them out of tracebacks
        window = self._guard.window
        if window is None or window.nodeid != self._nodeid:
            raise RuntimeError("the cloudguard fixture is used outside its own test")
        self._guard.refresh(window)
        return window

    @property
    def log(self) -> str:
        return self._guard.log

    @property
    def reaches(self) -> tuple[Record, ...]:
        """Every reach this test has recorded so far, expected or not."""
        return tuple(self._window().reaches)

    def expect(self, *, via: str, target: str | None = None) -> list[Record]:
        """Assert that this test's reach through `via` (to `target`) was refused and recorded.

        The matching records, and only those, no longer fail the test: the test states
        in its own code that it made them. The call was still refused; nothing was let
        through. Raises AssertionError when no such reach was recorded.
        """
        __tracebackhide__ = True
        window = self._window()
        matched = [
            i
            for i, record in enumerate(window.reaches)
            if record.get("via") == via
            and (target is None or record.get("target") == target)
            and i not in window.expected
            and i not in window.reported
        ]
        if not matched:
            seen = ", ".join(f"{r.get('via')} -> {r.get('target')}" for r in window.reaches)
            wanted = via + (f" -> {target}" if target else "")
            raise AssertionError(
                f"cloudguard: expected a reach {wanted} refused and recorded by this test; "
                f"recorded: {seen or 'none'}"
            )
        window.expected.extend(matched)
        return [window.reaches[i] for i in matched]


@pytest.fixture
def cloudguard(request: pytest.FixtureRequest) -> CloudGuard:
    """This test's reaches (`.reaches`) and `.expect(via=..., target=...)`."""
    guard = request.config.stash.get(GUARD, None)
    if guard is None:
        pytest.fail(
            "the cloudguard fixture needs the plugin enabled: pass --cloudguard, or set "
            "`cloudguard = true` in the pytest ini settings",
            pytrace=False,
        )
    return CloudGuard(guard, request.node.nodeid)
