"""The auditor: inventories, evidence, classification and reports.

- `option_spec`: how a declaration becomes a parameter and a parsed value (the options
  themselves, read into `Settings` and turned into the engines' requests: cloudguard.settings);
- `inventories`, `inventory_files`: where resources come from (a live sweep, an export);
- `evidence/`: what the fleet's records say (one module per source);
- `classify`, `cost`: one resource -> a finding, and what it costs;
- `auditor`: inventories + evidence -> the report;
- `formats/`: the report for a person or a tool (the JSON document is
  cloudguard.documents.audit_report);
- `command`: the thin typer CLI.

Also here (each in its own words, the first line of its docstring):

- `config`: Values of the `[audit]` and `[reap]` tables of `cloudguard.toml` and of the
  command line.
- `history_options`: The values of the `[history]` and `[notify]` tables: each parsed and
  checked on its own.
- `price_lists`: Prices from the clouds' own price lists, kept in a dated local cache.
- `remember`: What the audit remembers and tells: acknowledgements, the history, the
  webhooks.
- `scope_lines`: What a live sweep shows on stderr as it goes: slow is never silent (issue
  36, item 2).
"""
