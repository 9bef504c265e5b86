"""What cloudguard writes down and reads back: one module per schema, writer and strict reader.

- `findings`      the records of an audit (verdicts, findings, the report);
- `audit_report`  `cloudguard.audit` v1 (`cloudguard audit --format json`);
- `plan`          `cloudguard.reap.plan` v2 (`cloudguard reap plan`);
- `reap_log`      `cloudguard.reap.log` v1 (`cloudguard reap apply`, JSON Lines);
- `reach_log`     the reach log (the guard's: `cloudguard run`, `check`, the plugin).

Each schema's JSON Schema is in cloudguard/schemas/. Nothing is imported here: the reach
log's writer, a fast path, must not pay for the other documents.
"""
