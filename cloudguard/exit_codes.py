"""Exit codes: a user-facing contract (see docs/reference.md). Stdlib only."""

CLEAN = 0
ORPHANS_FOUND = 1
USAGE = 2
DID_NOT_RUN = 75
REFUSED_ADMISSION = 97
REACH_REFUSED = 98
