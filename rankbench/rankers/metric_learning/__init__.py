"""Ordinal distance metric learning: cMDS-DML (Yu & Li) and LDMLR (Li et al. 2015)."""
