"""Owned ids from a plain file: for controllers that keep their own list.

One id a line (`#` comments, blank lines ignored), or a JSON list of strings.
A cloud id the file names is owned: its VM is explained even without a record
in the fleet's controller layout. A file that cannot be read or parsed is
`EvidenceError` (the audit did not run, 75), never "owns nothing".
"""

from __future__ import annotations

import json
from pathlib import Path

from cloudguard.audit.evidence.interface import (
    EvidenceError,
    EvidenceRequest,
    EvidenceSource,
    Factory,
    NotSupplied,
    OwnedIdFiles,
    cloud_id_key,
)
from cloudguard.cloud.options import EVIDENCE_PANEL, Shown, declare, string

FILES = declare(
    "owned_ids",
    parse=string,
    default=(),
    metavar="FILE",
    help="File of owned cloud ids: one a line (# comments) or a JSON list (repeatable).",
    apply=Shown("File of owned cloud ids (repeatable).", "FILE"),
    many=True,
    path=True,
    panel=EVIDENCE_PANEL,
    locates=True,
)


def read_owned_ids_file(path: str | Path) -> frozenset[str]:
    source = f"owned ids {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError(source, f"cannot read: {exc}") from exc
    if text.lstrip().startswith("["):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EvidenceError(source, f"not a JSON list: {exc}") from exc
        if not isinstance(document, list):
            raise EvidenceError(source, "not a JSON list")  # e.g. `[1] [2]` is not JSON at all
        for index, item in enumerate(document):
            if not isinstance(item, str) or not item.strip():
                raise EvidenceError(source, f"item {index} is not a non-empty string")
        return frozenset(cloud_id_key(item) for item in document)
    lines = (line.strip() for line in text.splitlines())
    return frozenset(cloud_id_key(line) for line in lines if line and not line.startswith("#"))


def _build(request: EvidenceRequest) -> EvidenceSource | NotSupplied:
    paths = request.value(FILES)
    if not paths:
        return NotSupplied("no --owned-ids")
    return OwnedIdFiles("owned-ids-file", "owned ids", read_owned_ids_file, tuple(paths))


FACTORY = Factory(_build, options=(FILES,))
