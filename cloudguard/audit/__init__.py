"""The auditor: inventories, evidence, classification and reports."""
