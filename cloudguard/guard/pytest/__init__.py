"""cloudguard's pytest plugin: every test sealed, every reach attributed to the test that made it.

One role per module, as pytest-xdist splits its plugin:

- `plugin`: the hooks pytest calls (entry point `pytest11: cloudguard`), thin;
- `switch`: the project's switch: never off without saying so;
- `early`: the session's own seal, made before the suite's declarations;
- `roles`: which session this is, and which records are its to judge;
- `session_guard`: per test, the log since the test began; at the end, the verdict;
- `failure`: the message a test that reached fails with;
- `fixture`: the `cloudguard` fixture (`.reaches`, `.expect`).

This package imports nothing on purpose (nothing runs before pytest asks).

Also here (each in its own words, the first line of its docstring):

- `blocked`: Entry point `pytest11: cloudguard-switch`: `-p no:cloudguard` is never unsaid
  either.
- `where`: Where in the session a reach happens: collection, the test's file and line, the
  fixture.
"""
