"""Making untrusted values (tag values, names) safe for a one-line report cell.

Tags are written by whoever created the VM. A newline would break a table row,
an escape sequence would repaint the terminal, a 10 kB value would bury the
report. Human formats show an escaped, shortened form; JSON keeps the exact
value (JSON escaping is lossless).
"""

from __future__ import annotations

import unicodedata
from datetime import timedelta

DEFAULT_LIMIT = 80


def one_line(value: str | None, limit: int = DEFAULT_LIMIT) -> str:
    if value is None:
        return "-"
    head = value[: limit * 4]
    if head.isprintable() and "\\" not in head:
        # The common case, a plain name or id: nothing to escape (every character
        # `_escape` rewrites is non-printable or a backslash), at C speed.
        escaped = head
    else:
        escaped = "".join(_escape(ch) for ch in head)
    if len(escaped) > limit or len(value) > limit * 4:
        return f"{escaped[:limit]}…(+{len(value) - limit} chars)"
    return escaped


def _escape(ch: str) -> str:
    # Cc: C0/C1 controls (\n, \x1b, \x9b), Cf: format (bidi overrides, zero width),
    # Zl/Zp: line and paragraph separators.
    if unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}:
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    if ch == "\\":
        return "\\\\"
    return ch


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
