"""rankbench.engine"""
