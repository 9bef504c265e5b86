"""The values of the `[history]` and `[notify]` tables: each parsed and checked on its own.

Which of `url`, `url-env` and `path` may go together is checked where the
store's place is made (cloudguard.settings.engine_requests): a parser sees one value.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cloudguard.cloud.options import OptionValueError, string
from cloudguard.history.postgresql import SCHEMES, is_postgresql_url, url_problem

if TYPE_CHECKING:
    from cloudguard.notify.send import Webhook

WEBHOOK_KEYS = ("kind", "name", "url", "url-env")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def non_empty(value: object) -> str:
    text = string(value)
    if not text.strip():
        raise OptionValueError("must not be empty")
    return text


def postgresql_url(value: object) -> str:
    url = string(value)
    if not is_postgresql_url(url):
        raise OptionValueError(
            f"expected a {' or '.join(f'{s}://' for s in SCHEMES)} URL (a SQLite file is `path`)"
        )
    if (problem := url_problem(url)) is not None:
        raise OptionValueError(f"not a valid URL: {problem}")
    return url


def variable_name(value: object) -> str:
    name = string(value)
    if not _VARIABLE.fullmatch(name):
        raise OptionValueError(f"not an environment variable name: {name!r}")
    return name


def webhook(value: object) -> Webhook:
    """One `[[notify.webhook]]` table: its kind, a name for messages, and where it is."""
    # Sending's module (urllib, ssl) only for a file that names a webhook, not every command.
    from cloudguard.notify.send import KINDS, Webhook, check_url

    if not isinstance(value, dict):
        raise OptionValueError("each webhook is a table ([[notify.webhook]])")
    unknown = sorted(set(value) - set(WEBHOOK_KEYS))
    if unknown:
        raise OptionValueError(f"unknown key {unknown[0]!r} (keys: {', '.join(WEBHOOK_KEYS)})")
    kind = value.get("kind")
    if kind not in KINDS:
        raise OptionValueError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    if ("url" in value) == ("url-env" in value):
        raise OptionValueError(
            "give url-env (the environment variable holding the URL, which is a secret) "
            "or url, one of them"
        )
    url = string(value["url"]) if "url" in value else None
    if url is not None and (problem := check_url(url)) is not None:
        raise OptionValueError(f"url: {problem}")
    url_env = variable_name(value["url-env"]) if "url-env" in value else None
    name = non_empty(value.get("name", kind))
    return Webhook(kind=kind, name=name, url=url, url_env=url_env)
