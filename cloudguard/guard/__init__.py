"""The guard half: seal, refusers, reach log, in-process guards, hard seal, run, doctor.

This module imports nothing on purpose: the shims and the refusing provider
import `cloudguard.guard.refuse` with `python3 -I -S`, and every import here
would be paid on that fast path.
"""
