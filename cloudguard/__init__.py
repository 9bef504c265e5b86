"""cloudguard: keep test suites from reaching real clouds, find what they leaked.

This module imports nothing on purpose: the shims and the refusing provider
import `cloudguard.guard.refuse` with `python3 -I -S`, and every import here would
be paid on that fast path.

pytest marks its plugins' packages for assertion rewriting and warns when one
is already imported, as it is in a sealed xdist worker (the guards'
sitecustomize imports it first). cloudguard has nothing to rewrite; the
marker below tells pytest so: PYTEST_DONT_REWRITE
"""

__version__ = "0.1.0"
