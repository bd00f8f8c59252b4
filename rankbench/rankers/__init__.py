"""Rankers: one module per algorithm family, each a scikit-learn estimator registered by name."""
