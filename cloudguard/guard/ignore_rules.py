"""git's ignore rules as they were before the run, applied to a path that appeared during it.

After the command, the tracked-files check asks no git (`tracked`): a path
that was not there before is judged here against the rules read before the
run (every `.gitignore` git listed then, `info/exclude`, the global excludes
file), never against what the working tree holds after (a `.gitignore` the
command wrote with `*` in it is an added file, not a rule).

The gitignore(5) pattern language: blank lines and `#` comments skipped,
trailing spaces dropped unless escaped, `!` re-includes, a trailing `/`
matches directories only, a `/` at the start or in the middle anchors the
pattern to its file's directory (else it matches at any depth below it),
`*` `?` `[...]` never cross `/`, and `**` in `**/`, `/**/` and `/**` spans
directories. Later lines win over earlier ones, a deeper `.gitignore` over a
shallower one, `.gitignore` files over `info/exclude` over the global file;
a path under an ignored directory is ignored whatever a rule says of it (the
walk never enters that directory). Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    base: str  # the checkout-relative directory of the file it came from ("" at the top)
    pattern: re.Pattern[str]
    negated: bool
    directory_only: bool


def parse(text: str, base: str = "") -> list[Rule]:
    """The rules of one ignore file whose directory is `base` (checkout-relative)."""
    rules = []
    for raw in text.splitlines():
        line = _strip_trailing_spaces(raw)
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):
            line = line[1:]  # "!" re-includes; "\\!" and "\\#" are literal
        directory_only = line.endswith("/") and not line.endswith("\\/")
        line = line.rstrip("/") if directory_only else line
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = body if anchored else f"(?:.*/)?{body}"
        rules.append(Rule(base, re.compile(regex, re.DOTALL), negated, directory_only))
    return rules


def ignored(rules: Iterable[Rule], relative: str, *, is_directory: bool) -> bool:
    """Whether `relative` (checkout-relative, its parents not ignored) is ignored: the last rule
    that matches it decides; `rules` in increasing precedence."""
    decided = False
    for rule in rules:
        if rule.directory_only and not is_directory:
            continue
        if rule.base:
            if not relative.startswith(rule.base + "/"):
                continue
            inner = relative[len(rule.base) + 1 :]
        else:
            inner = relative
        if rule.pattern.fullmatch(inner):
            decided = not rule.negated
    return decided


def _strip_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped[:-1] + " "  # "\ " keeps one space
    return stripped.rstrip("\r")


def _translate(pattern: str) -> str:
    """A gitignore glob (`/` separated, no leading `/`) as a regular expression."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            before = i == 0 or pattern[i - 1] == "/"
            after = i + 2 == n or pattern[i + 2] == "/"
            if before and after:
                if i + 2 == n:  # "x/**": everything inside
                    out.append(".*")
                    i += 2
                else:  # "**/" at the start or "/**/": zero or more directories
                    out.append("(?:.*/)?")
                    i += 3
                continue
            out.append("[^/]*")  # any other "**" is a plain "*"
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _bracket_end(pattern, i)
            if end < 0:
                out.append(re.escape(c))
            else:
                inside = pattern[i + 1 : end]
                if inside.startswith("!"):
                    inside = "^" + inside[1:]
                inside = inside.replace("\\", "\\\\")
                out.append(f"(?!/)[{inside}]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _bracket_end(pattern: str, start: int) -> int:
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 1
    return i if i < len(pattern) else -1
