"""The auditor: inventories, evidence, classification and reports.

- `inventories`, `inventory_files`: where resources come from (a live sweep, an export);
- `evidence/`: what the fleet's records say (one module per source);
- `classify`, `cost`: one resource -> a finding, and what it costs;
- `auditor`: inventories + evidence -> the report;
- `formats/`: the report for a person or a tool (the JSON document is
  cloudguard.documents.audit_report);

The options the auditor is given (read into `Settings` and turned into its requests) are
cloudguard.settings's, and its command is cloudguard.cli's: nothing here reads either.

Also here (each in its own words, the first line of its docstring):

- `price_lists`: Prices from the clouds' own price lists, kept in a dated local cache.
- `remember`: What the audit remembers and tells: acknowledgements, the history, the
  webhooks.
- `scope_lines`: What a live sweep shows on stderr as it goes: slow is never silent (issue
  36, item 2).
"""
