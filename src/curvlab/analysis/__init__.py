"""Layer 5, analysis: statistics and verdicts over tidy records (no training here).

- :mod:`~curvlab.analysis.stats`  paired tests, intervals, equivalence, power (seeds needed), Holm;
- :mod:`~curvlab.analysis.randomization`  the exact paired sign-flip test, ties, floors of p;
- :mod:`~curvlab.analysis.decidability`  whether a family of claims can reach α at its seeds;
- :mod:`~curvlab.analysis.empirical`  a study's runs into effects, correlations and claims;
- :mod:`~curvlab.analysis.association`  E3 within task × model: seed-cluster bootstrap, a
  permutation null that keeps the model means, the paired Δ–Δ regression (test runs:
  :mod:`~curvlab.analysis.synthetic`);
- :mod:`~curvlab.analysis.plan`  the frozen analysis plan of Part II and its SHA-256;
- :mod:`~curvlab.analysis.schema`  the claims.json record schema and its validators;
- :mod:`~curvlab.analysis.claims`  verdicts of the reproduction table from named checks;
- :mod:`~curvlab.analysis.growth`  growth-law fits of curvature against depth.
"""
