"""The experiment engine: runner, feature cache and result store."""
