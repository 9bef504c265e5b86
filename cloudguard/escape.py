"""Untrusted text made safe for a terminal or a one-line report cell. Stdlib only.

Values from outside (argv, targets, test names, working directories, tag
values, file names) reach the operator's terminal. A newline would forge a
line, an escape sequence would repaint the terminal, a bidi override would
reorder what is read, a 10 kB value would bury the report. Every human-facing
output shows them through `one_line`; JSON keeps the exact value (JSON
escaping is lossless).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the refusers' start-up; mypy reads this by name
if TYPE_CHECKING:
    from typing import Any

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


# -- report formats: plain text a renderer shows as text, markdown that renders as itself ---


def defang(text: str) -> str:
    """Plain text that no markdown renderer turns into a link, an image or HTML.

    GitHub renders SARIF and JUnit messages as markdown in places (code scanning,
    test-report summaries), and links bare URLs, `www.` names and e-mail addresses
    (`mailto:`, `xmpp:` too) even there. A plain-text format has no escape a plain
    viewer would undo, so a value is shown as security reports show addresses
    (`https[:]//host`, `www[.]host`, `name[@]host`), a link's `](` parted (`] (`), and
    a `<` that could open a tag or an autolink followed by a space.
    """
    for fang, defanged in _FANGS:
        if fang in text:
            text = text.replace(fang, defanged)
    if "." not in text:
        return text
    import re  # here: the refusers import this module on their fast path, and never defang

    return re.sub(r"(?i)\b(www)\.", r"\1[.]", text)


_FANGS = (("://", "[:]//"), ("@", "[@]"), ("](", "] ("), ("<", "< "))


def inert(value: str | None, limit: int = DEFAULT_LIMIT) -> str:
    """`one_line`, then `defang`: an untrusted value in a plain-text format's message."""
    return defang(one_line(value, limit))


# Every character that can start a construct inside a line (code, emphasis, strikethrough,
# a link, an image, raw HTML or an entity, a pipe that ends the cell), plus `:` and `.`:
# GitHub's autolink finder needs an unescaped `:` after `http(s)`/`ftp` and `.` after
# `www`. Escaped (CommonMark lets any ASCII punctuation be), each is only itself. GitHub
# finds e-mail autolinks (and `mailto:`, `xmpp:`) in the text after escapes are undone, so
# each `@` is also followed by an empty HTML comment: the address is split where the
# finder looks, and renders as nothing (a mention `@name` is split the same way).
_ACTIVE = "\\`*_~|[]()!<>&:."
_ESCAPED = {mark: "\\" + mark for mark in _ACTIVE} | {"@": "\\@<!-- -->"}
_each_active: Any = None  # a compiled pattern's `sub`, made on first use: `re` is not free


def markdown_cell(value: str) -> str:
    """A markdown table cell that renders as exactly `value`: it cannot end the row, open
    code, emphasise, link, autolink, embed an image, or inject HTML."""
    global _each_active
    if _each_active is None:
        import re

        _each_active = re.compile("[" + re.escape("".join(_ESCAPED)) + "]").sub
    # A pattern finds the marks twice as fast as str.translate maps every character.
    return _each_active(_escaped, value)


def _escaped(mark: Any) -> str:
    return _ESCAPED[mark.group()]


def sarif_text(message: str) -> str:
    """A SARIF plain-text message: `[`, `]` and `\\` escaped (SARIF 2.1.0 3.11.5), so a value
    cannot make an embedded link. The one rule for the guard's and the audit's SARIF."""
    return message.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def sarif_uri(where: str) -> str:
    """A SARIF URI reference (an artifact's location): percent-encoded, no spaces."""
    from urllib.parse import quote  # here: the refusers import this module, never this

    return quote(where, safe="/:._-@")
