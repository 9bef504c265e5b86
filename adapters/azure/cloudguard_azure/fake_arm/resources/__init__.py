"""Microsoft.Resources in the fake ARM: subscriptions and resource groups."""
