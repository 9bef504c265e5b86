"""Reading a JSON document cloudguard wrote, strictly: every field checked, each error naming it.

A document is refused whole (`DocumentError`, exit 97) when it is not what it
claims: wrong schema or version, malformed, a field of the wrong type. A
request that cannot be honoured with a well-formed document (a file that does
not exist) is a `DocumentUsageError` (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from cloudguard import json_input
from cloudguard.cloud.exports import type_name
from cloudguard.cloud.options import OptionValueError


class DocumentError(Exception):
    """A document that is not what it claims (wrong schema or version, malformed): exit 97."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")


class DocumentUsageError(ValueError):
    """A well-formed request that cannot be honoured (a missing file, an unsafe plan): exit 2."""


def read_json_file(path: Path, what: str, error: type[DocumentError] = DocumentError) -> Any:
    """JSON from `path`; a missing file is usage, an unreadable or non-JSON one is malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise DocumentUsageError(f"{what} {path} does not exist") from exc
    except IsADirectoryError as exc:
        raise DocumentUsageError(f"{what} {path} is a directory, not a file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise error(str(path), f"cannot read {what}: {exc}") from exc
    try:
        return json_input.loads(text)
    except json.JSONDecodeError as exc:
        raise error(str(path), f"{what} is not valid JSON: {exc}") from exc


def not_a(root: Mapping[str, Any], expected: str) -> str:
    """Why `root` is not the `expected` document, in terms of what it is."""
    schema, version = root.get("schema"), root.get("schema_version")
    if schema is None:
        keys = ", ".join(sorted(map(str, root))[:6]) or "none"
        return (
            f'not a {expected}: a JSON document with no "schema" field '
            f"(its keys: {keys}), not something cloudguard wrote"
        )
    return f"not a {expected}: its schema is {schema!r} version {version!r}"


def not_an_object(value: Any, expected: str) -> str:
    """Why `value`, the whole document, is not the `expected` document (a JSON object)."""
    if isinstance(value, list):
        entries = f"{len(value)} entr{'y' if len(value) == 1 else 'ies'}"
        return f"not a {expected}: a JSON list of {entries} (an inventory export?), not an object"
    return f"not a {expected}: {type_name(value)}, not a JSON object"


def aware_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError("no UTC offset")
    return moment


T = TypeVar("T")


class StrictReader:
    """Typed access to a JSON document; any mismatch is `error` naming the field."""

    def __init__(self, source: str, error: type[DocumentError] = DocumentError) -> None:
        self.source = source
        self.error = error

    def fail(self, where: str, message: str) -> DocumentError:
        return self.error(self.source, f"{where or 'document'}: {message}")

    def root(
        self, value: Any, schema: str, version: int | tuple[int, ...], what: str, remedy: str
    ) -> Mapping[str, Any]:
        """The document's top object, if it is `schema` at `version` (or one of the versions
        given; `what`: "report"); else the error says what it is instead, and `remedy` how
        to make the right one."""
        versions = (version,) if isinstance(version, int) else version
        if not isinstance(value, dict):
            raise self.error(self.source, f"{not_an_object(value, f'{schema} {what}')}; {remedy}")
        root: Mapping[str, Any] = value
        if root.get("schema") != schema or root.get("schema_version") not in versions:
            expected = f"{schema} v{' or v'.join(map(str, versions))} {what}"
            raise self.error(self.source, f"{not_a(root, expected)}; {remedy}")
        return root

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "expected a JSON object")
        return value

    def array(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, "expected a JSON array")
        return value

    def text(self, parent: Mapping[str, Any], key: str, where: str) -> str:
        value = parent.get(key)
        if not isinstance(value, str):
            raise self.fail(f"{where}.{key}".lstrip("."), "expected a string")
        return value

    def text_list(self, value: Any, where: str) -> list[str]:
        items = self.array(value, where)
        if not all(isinstance(v, str) for v in items):
            raise self.fail(where, "expected an array of strings")
        return items

    def tags(self, value: Any, where: str) -> dict[str, str]:
        if value is None:
            return {}
        tags = self.obj(value, where)
        if not all(isinstance(v, str) for v in tags.values()):
            raise self.fail(where, "tag values must be strings")
        return dict(tags)

    def optional_text(self, parent: Mapping[str, Any], key: str, where: str) -> str:
        return "" if parent.get(key) is None else self.text(parent, key, where)

    def optional_time(self, parent: Mapping[str, Any], key: str, where: str) -> datetime | None:
        return None if parent.get(key) is None else self.time(parent, key, where)

    def time(self, parent: Mapping[str, Any], key: str, where: str) -> datetime:
        text = self.text(parent, key, where)
        return self.parsed(text, f"{where}.{key}".lstrip("."), aware_time)

    def parsed(self, text: str, where: str, parse: Callable[[str], T]) -> T:
        try:
            return parse(text)
        except (ValueError, OptionValueError) as exc:
            raise self.fail(where, f"{text!r}: {exc}") from exc
