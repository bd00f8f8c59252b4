"""Support-vector ranking: PRSVM, Ensemble RankSVM, linear and kernel RankSVM, RankMKL.

All of them minimise the same squared-hinge primal, ``0.5 ||w||^2 + C * sum loss(M w)``, with one
solver (:mod:`._primal`) that only sees the loss matrix ``M`` through an oracle
(:mod:`._oracles`): streamed triples of absolute differences (PRSVM), the sparse pair matrix
times features (RankSVM), an explicit matrix (the paper's memory behaviour), or a kernel's
factor (kernel RankSVM, RankMKL's inner problem).
"""
