"""The auditor: inventories, evidence, classification and reports.

- `options`, `option_spec`, `settings_files`, `command_line`: the options of `audit` and
  `reap apply` (the core's own; evidence sources and clouds declare theirs), read from
  cloudguard.toml and the command line into `Settings`;
- `from_settings`: the one boundary from `Settings` to the policy, the evidence request
  and each cloud's sweep request;
- `inventories`, `inventory_files`: where resources come from (a live sweep, an export);
- `evidence/`: what the fleet's records say (one module per source);
- `classify`, `cost`: one resource -> a finding, and what it costs;
- `auditor`: inventories + evidence -> the report;
- `formats/`: the report for a person or a tool (the JSON document is
  cloudguard.documents.audit_report);
- `command`: the thin typer CLI.
"""
