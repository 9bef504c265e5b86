"""Making untrusted values (tag values, names) safe for a one-line report cell.

Tags are written by whoever created the VM. A newline would break a table row,
an escape sequence would repaint the terminal, a 10 kB value would bury the
report. Human formats show an escaped, shortened form; JSON keeps the exact
value (JSON escaping is lossless).
"""

from __future__ import annotations

import re
from datetime import timedelta

# The escaping lives in cloudguard.escape (stdlib only) so the guard's output uses it too.
from cloudguard.escape import DEFAULT_LIMIT, one_line

__all__ = ["DEFAULT_LIMIT", "age", "defang", "inert", "money", "one_line"]

_WWW = re.compile(r"(?i)\b(www)\.")


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
    return _WWW.sub(r"\1[.]", text) if "." in text else text


_FANGS = (("://", "[:]//"), ("@", "[@]"), ("](", "] ("), ("<", "< "))


def inert(value: str | None, limit: int = DEFAULT_LIMIT) -> str:
    """`one_line`, then `defang`: an untrusted value in a plain-text format's message."""
    return defang(one_line(value, limit))


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
