"""rankbench: reproduce classic ranking benchmarks and compare rankers under the same protocols."""

__version__ = "0.1.0"
