"""cloudguard's adapter for Google Cloud: offline `gcloud` exports, GCP's labels and kinds,
prices from the Cloud Billing Catalog API."""
