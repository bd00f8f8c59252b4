"""Protocols: each owns a task's splitting and scoring (reid, retrieval, ordinal, comparison, classification)."""
