"""One module per document cloudguard writes and reads back: its writer and its strict reader.

This package imports nothing on purpose: a document module is loaded by the
one that needs it, and nothing more.
"""
