"""Kernel logistic regression and its pairwise-constraint extension (Yan et al.)."""
