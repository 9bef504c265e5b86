"""The audit's memory: what each audit saw, what each reap did, and what changed since.

One store interface (`store.HistoryStore`) with two backends: a SQLite file in
the user's state directory by default (`sqlite.py`), or a PostgreSQL database
for audits that run on many machines (`postgresql.py`, needs the optional
`psycopg` driver: `cloudguard-ci[postgresql]`). `open_store` picks one from
the configured location. Stdlib only at import time.
"""
