"""The Azure Retail Prices API (prices.azure.com), public and unauthenticated, in the fake."""
