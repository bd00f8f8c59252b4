"""General utilities with no knowledge of rankbench's components: progress reporting, atomic
files, the time-and-memory meter, BLAS thread limits, seeding and a line search. Everything else
may import from here; nothing here imports from the rest of rankbench except ``errors``."""
