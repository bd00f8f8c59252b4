"""rankbench.preprocess"""
