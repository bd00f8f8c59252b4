"""Unsupervised preprocessors applied before a ranker, fitted on training rows only."""
