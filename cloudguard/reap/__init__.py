"""`cloudguard reap`: the remediation half of the auditor — plan, re-verify, act, log.

- `model`   records (a plan item, a skip), the `Reaper` interface adapters implement,
            and one error type per layer;
- `plan`    audit JSON -> a versioned plan, and reading a plan back (strictly);
- `verify`  the live re-check that decides whether one item may be acted on;
- `log`     the JSON Lines reap log: intent before an action, outcome after it;
- `engine`  one item at a time: read live, re-verify, act (or only say so);
- `command` the thin typer CLI (`cloudguard reap plan|apply`).

Nothing here imports a cloud SDK; adapters do, inside their functions.
"""
