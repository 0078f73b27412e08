"""Layer 3, analysis: statistics and verdicts over tidy records (no training here).

- :mod:`~curvlab.analysis.stats`  paired tests, intervals, equivalence, power, Holm;
- :mod:`~curvlab.analysis.empirical`  a study's runs into effects, correlations and claims;
- :mod:`~curvlab.analysis.claims`  verdicts of the reproduction table from named checks;
- :mod:`~curvlab.analysis.growth`  growth-law fits of curvature against depth.
"""
