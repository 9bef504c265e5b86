"""Microsoft.Authorization in the fake ARM: management locks."""
