"""Making untrusted values (tag values, names) safe for a one-line report cell.

Tags are written by whoever created the VM. A newline would break a table row,
an escape sequence would repaint the terminal, a 10 kB value would bury the
report. Human formats show an escaped, shortened form; JSON keeps the exact
value (JSON escaping is lossless).
"""

from __future__ import annotations

from datetime import timedelta

# The escaping lives in cloudguard.escape (stdlib only) so the guard's output and reports use
# it too.
from cloudguard.escape import DEFAULT_LIMIT, defang, inert, one_line

__all__ = ["DEFAULT_LIMIT", "age", "defang", "inert", "money", "one_line"]


def money(value: float | None, currency: str) -> str:
    if value is None:
        return "unknown"
    return f"{value:,.2f} {currency}" if value >= 1 else f"{value:.4f} {currency}"


def age(value: timedelta | None) -> str:
    if value is None:
        return "unknown"
    seconds = int(value.total_seconds())
    if seconds < 0:
        return "in the future"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600}h"
