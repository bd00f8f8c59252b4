"""Boosted rankers: RankBoost (Freund et al. 2003) and ELF's AdaBoost (Gray & Tao 2008)."""
