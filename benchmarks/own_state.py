"""A benchmark's own state directory: nothing a benchmark runs writes the user's.

`cloudguard audit` records every run in the history store of the state
directory (`$XDG_STATE_HOME/cloudguard/history.sqlite3`; the user's
`~/.local/state` by default), and the benchmarks run it hundreds of times on
fleets of 100,000 VMs: a store of a hundred megabytes appeared in the user's
state directory that way. Each benchmark that runs cloudguard points
XDG_STATE_HOME at a temporary directory of its own, removed when it ends
(`benchmarks/run.py` does so for all of them); one that compares nights
gives each side a store of its own inside it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path


def own_state_directory() -> Path:
    """A new temporary state directory, this process's and its children's from now on."""
    state = Path(tempfile.mkdtemp(prefix="bench-state-"))
    atexit.register(shutil.rmtree, state, ignore_errors=True)
    os.environ["XDG_STATE_HOME"] = str(state)
    return state
