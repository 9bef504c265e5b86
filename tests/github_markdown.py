"""GitHub's markdown renderer (cmarkgfm, its cmark-gfm fork) and the links a text makes in it.

A report cloudguard writes for CI (a job summary, a SARIF or JUnit message)
carries values from outside: tag values, test names, URLs. Shared by the
audit's and the guard's reports: each renders what it wrote here and requires
no link or image to come from a value.
"""

from __future__ import annotations

from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

HOSTILE = {
    "url": "https://attacker.example/u",
    "www": "www.attacker.example",
    "email": "mallory@attacker.example",
    "mailto": "mailto:mallory@attacker.example",
    "xmpp": "xmpp:mallory@attacker.example/pc",
    "image": "![x](https://attacker.example/pixel.png)",
    "link": "[click](https://attacker.example/phish)",
    "html": '<a href="https://attacker.example/h">x</a>',
}


def gfm(text: str) -> str:
    """HTML as GitHub's renderer makes it (raw HTML kept, as GitHub keeps it before its
    sanitizer, which only removes)."""
    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


class _Targets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [
            f"<{tag} {name}={value}>" for name, value in attrs if name in ("href", "src")
        ]


def link_targets(html: str) -> list[str]:
    """Every href and src in `html` that points at the attacker."""
    parser = _Targets()
    parser.feed(html)
    return [t for t in parser.found if "attacker" in t]
