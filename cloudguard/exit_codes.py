"""Exit codes: a user-facing contract (see docs/reference.md). Stdlib only."""

CLEAN = 0
ORPHANS_FOUND = 1  # audit
ACTION_FAILED = 1  # reap apply: an action failed or its outcome is unknown
USAGE = 2
DID_NOT_RUN = 75
REFUSED_ADMISSION = 97
REACH_REFUSED = 98  # and a write where the run must not write (docs/reference.md)
# `cloudguard run` when CMD cannot be started (the shell's own codes, kept for CMD).
COMMAND_NOT_EXECUTABLE = 126
COMMAND_NOT_FOUND = 127
