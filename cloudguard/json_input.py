"""JSON from outside, decoded so that every way it can be wrong is a `json.JSONDecodeError`.

The stdlib decoder fails in two more ways than that: a document nested deeper
than the interpreter's recursion limit raises RecursionError, and an integer
of more than 4,300 digits raises a plain ValueError (the limit Python sets on
converting long digit strings). An inventory, a plan or a controller export
that does either is malformed JSON like any other, and must be named so by
whoever reads it, never end the command in a traceback (which exits 1, the
code that means "orphans found"). Stdlib only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_DECODER = json.JSONDecoder()
# The C scanner `raw_decode` calls: (value, end) of the value at an index, StopIteration
# (its `value` the index) where there is none. For a loop over many values that converts
# errors itself as `raw_decode` does (inventory_files._array_items): one call a value.
scan_once: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


class UnreadableJson(json.JSONDecodeError):
    """Valid-looking JSON the decoder cannot hold: too deep, or a number too long."""

    def __init__(self, message: str, document: str) -> None:
        ValueError.__init__(self, message)  # the message alone: no misleading line/column
        self.msg, self.doc, self.pos, self.lineno, self.colno = message, document, 0, 1, 1


def loads(text: str | bytes) -> Any:
    """`json.loads`, failing only with JSONDecodeError (and UnicodeDecodeError for bytes)."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except (RecursionError, ValueError) as error:
        raise unreadable(error, text) from None


def raw_decode(text: str, index: int) -> tuple[Any, int]:
    """`JSONDecoder.raw_decode` (one value at `index`), failing only with JSONDecodeError."""
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as error:
        raise unreadable(error, text) from None


def unreadable(error: Exception, text: str | bytes) -> UnreadableJson:
    document = text if isinstance(text, str) else ""
    if isinstance(error, RecursionError):
        return UnreadableJson(
            "nested too deeply to read (arrays or objects inside each other)", document
        )
    # "Exceeds the limit (4300 digits) for integer string conversion: ...; use
    # sys.set_int_max_str_digits()": the advice is for programmers, not for this file.
    return UnreadableJson(f"unreadable value: {str(error).split(';')[0]}", document)
