"""The audit's memory: what each audit saw, what each reap did, and what changed since.

One store interface (`store.HistoryStore`) with two backends: a SQLite file in
the user's state directory by default (`sqlite.py`), or a PostgreSQL database
for audits that run on many machines (`postgresql.py`, needs the optional
`psycopg` driver: `cloudguard-ci[postgresql]`). `open_store` picks one from
the configured location. Stdlib only at import time.

Also here (each in its own words, the first line of its docstring):

- `database`: What the store needs of a database: one interface, a backend per engine.
- `errors`: Why the history could not be used. Every one is "did not run" (75) and names
  the store.
- `location`: Where the history lives: a PostgreSQL URL, a SQLite file, or the default
  file.
- `recording`: What recording one audit changes, worked out in memory: the store only
  reads and writes.
- `schema`: The store's tables, versioned: each version is a migration from the one
  before.
- `show`: What `cloudguard history` prints: the store's answers as tables for a person, or
  JSON.
- `store_records`: What the history store takes in and gives back: frozen records, no
  storage in sight.
- `store`: The history store: record audits and reaps, keep acknowledgements, answer
  questions.
"""
