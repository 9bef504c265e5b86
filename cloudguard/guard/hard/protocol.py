"""What the host and the supervisor tell each other: the spec file and the status pipe.

Both are lines of `key<TAB>value` (json would load `re`, a tenth of the
supervisor's start-up budget). A key may repeat (`mask`, `forward`).
Values never contain a newline: paths with one are refused by the host.
"""

from __future__ import annotations

from collections.abc import Iterable

REPEATED = ("mask", "forward", "keeper")


def encode(pairs: Iterable[tuple[str, object]]) -> str:
    lines = []
    for key, value in pairs:
        text = str(value)
        if "\n" in text or "\t" in key:
            raise ValueError(f"{key}: a value with a newline cannot be passed to the supervisor")
        lines.append(f"{key}\t{text}\n")
    return "".join(lines)


def decode(text: str) -> dict[str, str | list[str]]:
    """Keys to values; a repeated key (and only those) to the list of its values."""
    found: dict[str, str | list[str]] = {key: [] for key in REPEATED}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        if key in REPEATED:
            found[key].append(value)  # type: ignore[union-attr]
        elif key:
            found[key] = value
    return found
