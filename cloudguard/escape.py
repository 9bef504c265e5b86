"""Untrusted text made safe for a terminal or a one-line report cell. Stdlib only.

Values from outside (argv, targets, test names, working directories, tag
values, file names) reach the operator's terminal. A newline would forge a
line, an escape sequence would repaint the terminal, a bidi override would
reorder what is read, a 10 kB value would bury the report. Every human-facing
output shows them through `one_line`; JSON keeps the exact value (JSON
escaping is lossless).
"""

from __future__ import annotations

DEFAULT_LIMIT = 80


def one_line(value: str | None, limit: int = DEFAULT_LIMIT) -> str:
    if value is None:
        return "-"
    head = value[: limit * 4]
    if head.isprintable() and "\\" not in head:
        escaped = head  # the common case, and the refusers' fast path: nothing to escape
    else:
        escaped = "".join(_escape(ch) for ch in head)
    if len(value) > limit * 4:  # only the head was escaped: count what the value has left
        return f"{escaped[:limit]}…(+{len(value) - limit} chars)"
    if len(escaped) > limit:  # count what the escaped form has left (escapes make it longer)
        return f"{escaped[:limit]}…(+{len(escaped) - limit} chars)"
    return escaped


def _escape(ch: str) -> str:
    import unicodedata  # only when something may need escaping (~0.3 ms to import)

    # Cc: C0/C1 controls (\n, \x1b, \x9b), Cf: format (bidi overrides, zero width),
    # Zl/Zp: line and paragraph separators.
    if unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}:
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    if ch == "\\":
        return "\\\\"
    return ch
