"""What the supervisor tells the host on the status pipe: lines of `key<TAB>value`.

`started`, then at the end `code`, `recorded` (records relayed) and, when
they happened, `lost` (a record that could not be relayed), `dropped` and
`dropped_where` (packets the kernel dropped before the sink read them); or,
before anything ran, `setup_error` with the cause; or `failure` when the
supervisor itself failed. A value never contains a newline (each is one
line of text the supervisor wrote).
"""

from __future__ import annotations

from collections.abc import Iterable


def encode(pairs: Iterable[tuple[str, object]]) -> str:
    return "".join(f"{key}\t{' '.join(str(value).splitlines())}\n" for key, value in pairs)


def decode(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        if key:
            found[key] = value
    return found
