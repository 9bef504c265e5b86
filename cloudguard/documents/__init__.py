"""One module per document cloudguard writes and reads back: its writer and its strict reader.

This package imports nothing on purpose: the refusing shims import
`cloudguard.documents.reach_log` on their `python3 -I -S` fast path.
"""
