"""`cloudguard reap`: the remediation half of the auditor — plan, re-verify, act, log.

- `planning`   audit report -> a plan: which findings, in which cloud's verb (offline);
- `rederive`   the audit again, for one live resource, with evidence read now;
- `verify`     the live re-check that decides whether one item may be acted on;
- `locks`      one apply at a time, per plan and per resource;
- `apply`      one item at a time: read live, re-derive, verify, act (or only say so);
- `admission`  whether `reap apply` may act on a plan at all: the reasons it refuses.

The documents live in cloudguard.documents (`plan`: the plan's records, writer and
strict reader; `reap_log`: the log). What a cloud must do to be reaped (`Reaper`,
`Live`, the errors, the protection tags) is the cloud kernel's
(cloudguard.cloud.reaping). Nothing here
imports a cloud SDK; adapters do, inside their functions. The command
(`cloudguard reap plan|apply`) is cloudguard.cli.reap.

Also here (each in its own words, the first line of its docstring):

- `recorded`: What a `reap apply --yes` did, recorded in the history from what it wrote to
  its log.
"""
