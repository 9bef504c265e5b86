"""cloudguard: keep test suites from reaching real clouds, find what they leaked.

This module imports nothing on purpose: the shims and the refusing provider
import `cloudguard.refuse` with `python3 -I -S`, and every import here would
be paid on that fast path.
"""

__version__ = "0.1.0"
