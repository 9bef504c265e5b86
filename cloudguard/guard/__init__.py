"""The guard half: seal, refusers, reach log, in-process guards, hard seal, run, doctor, pytest.

    seal_registry  what to seal: registry.toml plus a project file, validated (97)
    seal           the seal directory and the sealed environment, built from a registry
    refuse         the refusing CLI shims and provider (stdlib only, `python3 -I -S`)
    reach          the reach log's fast writer: the record, appended (stdlib only)
    redaction      what in a command line is a secret (stdlib only)
    hints, hosts   the advice per channel; which hosts are clouds, metadata, loopback
    inprocess/     botocore, azure-core and socket guards, each declared in `declared`
    hard/          `run --hard`: namespaces whose only way out is a recording sink
    alarm          the reach log's check side: arm, watch, read since, describe, verdict
    session        GuardSession: the steps `run` and the pytest plugin share
    runner         `cloudguard run`: the command between the session's steps
    doctor         does the seal hold in this process
    pytest/        the pytest plugin: thin hooks, one role per module

The reach log's format and strict reader are a document of their own:
`cloudguard.documents.reach_log`.

This module imports nothing on purpose: the shims and the refusing provider
import `cloudguard.guard.refuse` with `python3 -I -S`, and every import here
would be paid on that fast path.

Also here (each in its own words, the first line of its docstring):

- `channel`: The record channel: the socket every refuser delivers its record on, served
  on one thread.
- `closed_pipe`: A reader that stops reading is not an error: `cloudguard check 2>&1 |
  head -1`.
- `git_index`: What git's index says, read as bytes (no git run): each entry's path, mode,
  object and flags.
- `ignore_rules`: git's ignore rules as they were before the run, applied to a path that
  appeared during it.
- `keeper`: The record keeper: where a run's reaches are held, and the reach log's only
  writer.
- `late_imports`: Nothing is imported once the command started: every module after it was
  loaded before.
- `policy`: What the seal bakes into every refuser: which variables are identity, which it
  owns.
- `pytest_facts`: How pytest would start in one Python, from a directory: the facts
  `cloudguard doctor` judges.
- `rendezvous`: Where a run's record keeper is found from any namespace, and the mark of a
  record that was not.
- `report`: The guard's findings as CI shows them: `--report FORMAT=FILE` for `run`,
  `check` and the plugin.
- `roots`: Ambient roots: where they are, what is in them, and what a run changed there.
- `stragglers`: Nothing the command started outlives `cloudguard run`.
- `tracked`: Tracked files: a run leaves the checkout as it found it, outside its declared
  outputs.
- `watch`: Which test wrote into an ambient root: inotify watches, read after each test.
- `witness`: The run's witness: what it must leave as it found it, looked at before and
  after.
"""
