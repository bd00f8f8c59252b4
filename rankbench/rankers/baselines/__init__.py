"""Baselines without learning (template matching) and a plain linear logistic regression."""
