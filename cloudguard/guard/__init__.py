"""The guard half: seal, refusers, reach log, in-process guards, hard seal, run, doctor, pytest.

    registry      what to seal: registry.toml plus a project file, validated (97)
    seal          the seal directory and the sealed environment, built from a registry
    refuse        the refusing CLI shims and provider (stdlib only, `python3 -I -S`)
    reach         the reach log's fast writer: the record, appended (stdlib only)
    redaction     what in a command line is a secret (stdlib only)
    hints, hosts  the advice per channel; which hosts are clouds, metadata, loopback
    inprocess/    botocore, azure-core and socket guards, each declared in `declared`
    hard/         `run --hard`: namespaces whose only way out is a recording sink
    alarm         the reach log's check side: arm, watch, read since, describe, verdict
    session       GuardSession: the steps `run` and the pytest plugin share
    runner        `cloudguard run`: the command between the session's steps
    doctor        does the seal hold in this process
    command       the `run`, `check`, `doctor` commands (cli.py registers them)
    pytest/       the pytest plugin: thin hooks, one role per module

The reach log's format and strict reader are a document of their own:
`cloudguard.documents.reach_log`.

This module imports nothing on purpose: the shims and the refusing provider
import `cloudguard.guard.refuse` with `python3 -I -S`, and every import here
would be paid on that fast path.
"""
