"""Prices from the clouds' own price lists, kept in a dated local cache.

Each cloud says which price a resource needs (`Cloud.price_query`) and where
its list can be read (`Cloud.price_list`). Before classifying, the auditor
gathers the audit's distinct queries (a fleet has few: its sizes and regions)
and answers them from the cache, `$XDG_CACHE_HOME/cloudguard/prices/<cloud>.json`
(else `~/.cache/...`): one entry per query, each with the list's name and the
date it answered. How the lists are used (`--prices`):

- `live`: an entry missing or older than `MAX_AGE` is asked of the list, once
  per audit for all of them; what the list answers is written back. A list
  that cannot be read is a warning, never a failure: the audit goes on with
  the cache as it is and the bundled table;
- `cache`: the cache as it is, never the network (the default without a live
  sweep: an audit of files does not reach out on its own);
- `bundled`: the bundled table alone.

A price a list has not got is remembered as missing (dated, asked again when
stale), so an unknown SKU does not cost a request per audit. The bundled table
(cost.py) prices only what no list did, and says so beside each figure.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from cloudguard import private_files
from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.cloud.pricing import ListedPrice, PriceList, PriceListError, PriceQuery
from cloudguard.cloud.records import Resource

LIVE, CACHE, BUNDLED = "live", "cache", "bundled"
MODES = ("auto", LIVE, CACHE, BUNDLED)
MAX_AGE = timedelta(days=7)  # retail prices change monthly at most; a week is fresh
_SCHEMA, _VERSION = "cloudguard.price-cache", 1

# provider -> PriceQuery.key -> the price
Listed = dict[str, dict[str, ListedPrice]]


def cache_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cloudguard" / "prices"


@dataclass
class PriceLists:
    """How an audit prices: `mode` (live, cache or bundled), each cloud's live list (live
    mode only), the cache directory and today's date (entries are dated)."""

    mode: str
    lists: Mapping[str, PriceList | None] = field(default_factory=dict)
    directory: Path = field(default_factory=cache_directory)
    today: date = field(default_factory=date.today)
    warnings: list[str] = field(default_factory=list)

    def resolve(self, resources: Iterable[Resource], clouds: Clouds) -> Listed:
        """The prices the resources need, from the cache and (live) the lists."""
        if self.mode == BUNDLED:
            return {}
        # Only clouds with a list to ask or a cache to read need their queries worked out:
        # an audit of files with no cache (the 100,000-VM path) does no more than this.
        priced = {
            name
            for name in clouds.names
            if self._path(name).exists() or (self.mode == LIVE and self.lists.get(name))
        }
        if not priced:
            return {}
        wanted = _queries(resources, clouds, priced)
        listed: Listed = {}
        for provider, queries in wanted.items():
            entries = self._read(provider)
            stale = [q for q in queries.values() if self._stale(entries.get(q.key))]
            source = self.lists.get(provider)
            live = self.mode == LIVE and bool(stale)
            if live and source is not None and self._ask(provider, source, stale, entries):
                self._write(provider, entries)
            listed[provider] = {
                key: price for key in queries if (price := _price(entries.get(key))) is not None
            }
        return listed

    def _stale(self, entry: Mapping[str, Any] | None) -> bool:
        if entry is None:
            return True
        try:
            return date.fromisoformat(str(entry.get("fetched"))) < self.today - MAX_AGE
        except ValueError:
            return True

    def _ask(
        self,
        provider: str,
        source: PriceList,
        queries: list[PriceQuery],
        entries: dict[str, Any],
    ) -> bool:
        try:
            answers = source.prices(queries)
        except Exception as exc:  # PriceListError, or a list's bug: prices never fail an audit
            reason = str(exc) if isinstance(exc, PriceListError) else repr(exc)
            self.warnings.append(
                f"{source.source} could not be read ({reason}): {provider} prices come from "
                "the price cache where it has them, else the bundled table"
            )
            return False
        fetched = self.today.isoformat()
        for query in queries:
            price = answers.get(query.key)
            entries[query.key] = (
                {"missing": True, "fetched": fetched, "source": source.source}
                if price is None
                else {
                    "hourly": price.hourly,
                    "currency": price.currency,
                    "source": price.source,
                    "fetched": price.fetched,
                    "detail": price.detail,
                }
            )
        return True

    def _path(self, provider: str) -> Path:
        return self.directory / f"{provider}.json"

    def _read(self, provider: str) -> dict[str, Any]:
        path = self._path(provider)
        try:
            fd = private_files.open_own(path, os.O_RDONLY)
        except FileNotFoundError:
            return {}
        except OSError as exc:  # a link, another user's file: not ours to believe
            self.warnings.append(f"price cache {path} not read: {exc}")
            return {}
        try:
            with open(fd, encoding="utf-8") as cache:
                document = json.load(cache)
            if document.get("schema") != _SCHEMA or document.get("version") != _VERSION:
                raise ValueError("not a cloudguard price cache of this version")
            entries = document["entries"]
            if not isinstance(entries, dict):
                raise ValueError("entries is not an object")
            return entries
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            self.warnings.append(f"price cache {path} not read ({exc}): it is rewritten")
            return {}

    def _write(self, provider: str, entries: dict[str, Any]) -> None:
        path = self._path(provider)
        try:
            self.directory.mkdir(parents=True, mode=0o700, exist_ok=True)
            document = {"schema": _SCHEMA, "version": _VERSION, "entries": entries}
            private_files.write_private(path, json.dumps(document, indent=1, sort_keys=True))
        except OSError as exc:
            self.warnings.append(f"price cache {path} not written: {exc}")


def _queries(
    resources: Iterable[Resource], clouds: Clouds, providers: set[str]
) -> dict[str, dict[str, PriceQuery]]:
    """provider -> key -> query, each distinct (provider, kind, size, region) asked once."""
    seen: set[tuple[str, str, str, str]] = set()
    wanted: dict[str, dict[str, PriceQuery]] = {}
    for resource in resources:
        combination = (resource.provider, resource.kind, resource.size, resource.region)
        if combination in seen or resource.provider not in providers:
            continue
        seen.add(combination)
        query = clouds.cloud(resource.provider).price_query(resource)
        if query is not None:
            wanted.setdefault(resource.provider, {})[query.key] = query
    return wanted


def _price(entry: Any) -> ListedPrice | None:
    """A cached price; None for a missing one (the list has none) or a malformed entry."""
    if not isinstance(entry, Mapping) or entry.get("missing"):
        return None
    try:
        return ListedPrice(
            hourly=float(entry["hourly"]),
            currency=str(entry.get("currency") or ""),
            source=str(entry.get("source") or ""),
            fetched=str(entry.get("fetched") or ""),
            detail=str(entry.get("detail") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None
