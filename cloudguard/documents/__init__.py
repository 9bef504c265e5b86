"""What cloudguard writes down and reads back: one module per schema, writer and strict reader.

- `findings`      the records of an audit (verdicts, findings, the report);
- `audit_report`  `cloudguard.audit` v1 (`cloudguard audit --format json`);
- `plan`          `cloudguard.reap.plan` v2 (`cloudguard reap plan`);
- `plan_table`    the plan as a table, for a person (what `reap plan` prints);
- `reap_log`      `cloudguard.reap.log` v1 (`cloudguard reap apply`, JSON Lines);
- `reach_log`     the reach log's format and strict reader (its fast writer stays on the
                  shims' path in cloudguard/guard/reach.py: the guard's `run`, `check`, plugin).

Each schema's JSON Schema is in cloudguard/schemas/. This package imports nothing on
purpose: a document module is loaded by the one that needs it, and nothing more.

Also here (each in its own words, the first line of its docstring):

- `finding_lines`: A finding's line of the JSON audit report, joined from parts many
  findings share.
- `strict_json`: Reading a JSON document cloudguard wrote, strictly: every field checked,
  each error naming it.
"""
