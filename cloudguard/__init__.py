"""cloudguard: keep test suites from reaching real clouds, find what they leaked.

This module imports nothing on purpose: the shims and the refusing provider
import `cloudguard.guard.refuse` with `python3 -I -S`, and every import here would
be paid on that fast path.

pytest marks its plugins' packages for assertion rewriting and warns when one
is already imported, as it is in a sealed xdist worker (the guards'
sitecustomize imports it first). cloudguard has nothing to rewrite; the
marker below tells pytest so: PYTEST_DONT_REWRITE

Also here (each in its own words, the first line of its docstring):

- `__main__`: `python -m cloudguard`: the same command as the `cloudguard` console script.
- `acknowledgements`: Acknowledgements: "known, owned by X, because Y, until Z" for one
  resource.
- `audit`: The auditor: inventories, evidence, classification and reports.
- `cli`: The `cloudguard` command: parses, wires, prints. The work lives in the modules it
  calls.
- `cloud`: The cloud kernel: what the core knows of a cloud, and the one place adapters
  plug in.
- `documents`: What cloudguard writes down and reads back: one module per schema, writer
  and strict reader.
- `escape`: Untrusted text made safe for a terminal or a one-line report cell. Stdlib
  only.
- `exit_codes`: Exit codes: a user-facing contract (see docs/reference.md). Stdlib only.
- `guard`: The guard half: seal, refusers, reach log, in-process guards, hard seal, run,
  doctor, pytest.
- `history`: The audit's memory: what each audit saw, what each reap did, and what changed
  since.
- `json_input`: JSON from outside, decoded so that every way it can be wrong is a
  `json.JSONDecodeError`.
- `notify`: Telling people: webhooks (Slack, Microsoft Teams, generic JSON) for what needs
  a person.
- `private_files`: Files cloudguard opens by a name someone else may have chosen: one
  open, then checks on it.
- `project_file`: Finding `cloudguard.toml`: only where the project and the user live,
  only if it is theirs.
- `pytest_plugin`: Compatibility: the pytest plugin under its former module name.
- `reap`: `cloudguard reap`: the remediation half of the auditor — plan, re-verify, act,
  log.
- `schemas`: JSON Schemas (draft 2020-12) of what cloudguard writes, shipped in the
  package.
- `settings`: Settings: one declaration per option becomes a flag, a cloudguard.toml key
  and a checked value.
- `trust_store`: The operator's consent to a discovered cloudguard.toml: its path and sha256, in
  their own state.
"""

__version__ = "0.1.0"
