"""cloudguard's adapter for Google Cloud: the live sweep, `gcloud` exports, GCP's labels and kinds,
prices from the Cloud Billing Catalog API.

adapter         the adapter object (`--provider gcp`): what the core asks of a cloud
live            the live sweep: scopes searched, then Compute where state decides billing
asset_search    Cloud Asset Inventory's searchAllResources over one scope, every page
compute_state   Compute Engine's aggregated lists: instance status, disk users, addresses
clients         the REST clients: endpoint, CA bundle, retries, one line per error
credentials     application default credentials, a key file, or fake-gcp: the endpoint rule
options         --gcp-scope, --gcp-key-file
export          gcloud's two exports, told apart by shape (the live path reads through them)
kinds           asset type -> kind, and what each bills idle
labels          the fleet's tags as label keys and values
prices          the Cloud Billing Catalog's Compute Engine SKUs: a machine type's hourly price
machine_types   a machine type's vCPUs and GiB, from its name
"""
