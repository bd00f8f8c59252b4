"""Dataset loaders: one module per dataset family, each registered under its YAML name."""
