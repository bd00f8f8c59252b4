"""The experiment engine: plan, jobs, execute, manifest, reuse, executors, feature cache."""
