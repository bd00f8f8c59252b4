"""Feature extractors: one module per extractor, registered under its YAML name."""
