"""The cloud kernel: what the core knows of a cloud, and the one place adapters plug in.

- `records`  the records a sweep yields (`Resource`, `SourceFailure`, `SweepResult`) and
             the request it is given (`SweepRequest`);
- `exports`  the parsers of a cloud CLI's JSON export, and helpers to write one;
- `reaping`  what reaping asks of a cloud: read one resource live (`Live`, `Dependent`),
             act on it (`Reaper`), and the errors of both;
- `options`  how an option is declared (the core's, an evidence source's, an adapter's own);
- `adapter`  the `CloudAdapter` protocol: everything cloud-specific, in one object;
- `cloud`    `Cloud`: one adapter as the core uses it, every rule with its strictest
             default and one error policy for its live sides;
- `adapter_registry` `Clouds`: the installed adapters (entry-point group
             `cloudguard.adapters`), each loaded once;
- `endpoints` the guard's one rule for a loopback endpoint, for adapters that take one.

Adapters import this package and nothing else of cloudguard. Nothing here imports the
auditor, the reaper or a cloud SDK. Import the modules, not this package: it imports
nothing, so an adapter pays only for what it uses.

Also here (each in its own words, the first line of its docstring):

- `kinds`: Kinds of resource, and whether each bills while it sits idle. Stdlib only; no
  cloud named.
- `pricing`: What a cloud's own price list is asked, and what it answers. Stdlib only; no
  cloud named.
- `progress`: What a live sweep says as it goes: each scope (a subscription, a region) as
  it begins and ends.
"""
