"""Evidence: what the fleet's own records say about the resources an audit found.

- `interface`  what a source is asked (`Question`), what it answers (`Facts`), how it is
               built from its options (`Factory`, `EvidenceRequest`), and `Evidence`, what
               classification consults;
- `source_registry` `SOURCES`, the one list of sources, and `gather`, which asks each
               once;
- one module per source, each with its reader, its options and its factory:
  `controller_records`, `fixture_ids`, `repository_generations`, `terraform_state`,
  `owned_ids_program`, `owned_ids_file`.
"""
