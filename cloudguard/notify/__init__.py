"""Telling people: webhooks (Slack, Microsoft Teams, generic JSON) for what needs a person.

A scheduled audit notifies only when something new needs attention (a new
finding, one back again, one that became leaking) or an acknowledgement
expired: a quiet night sends nothing, and the same orphan is not announced
every night. What is sent is chosen field by field (`message.py`): names,
ids, verdicts, reasons, task ids and cost, never tags, evidence details or
anything read from the environment. Delivery retries with backoff; a
webhook that still fails is reported (and the audit exits 75 when failing to
notify is configured as fatal). Stdlib only.

Also here (each in its own words, the first line of its docstring):

- `payloads`: One notification as each webhook wants it: Slack, Microsoft Teams, or our
  own JSON.
- `send`: Delivering a notification to each webhook: retries with backoff, failures
  reported.
"""
