"""curvlab.symbolic: exact Fisher-Rao geometry in SymPy.

- :mod:`curvlab.symbolic.fisher`: the Fisher information of a Gaussian family, derived from its
  log-density (``gaussian_fisher_information``).
- :mod:`curvlab.symbolic.geometry`: pullback metrics g = Jᵀ Σ⁻¹ J and the curvature chain
  g -> Γ -> Rᵃ_bcd -> Ric -> R, with Gaussian and sectional curvature (conventions in the module
  docstring: Γᵃ_bc = ``christoffel[a, b, c]``, Rᵃ_bcd = ``riemann[a, b, c, d]``, K = 1/r² on a
  sphere of radius r).
- :mod:`curvlab.symbolic.attention`: symbolic ungated and gated attention maps.

The helpers behind them, each a module named for what it does: :mod:`.arithmetic` (the one
arithmetic: a rational function field with a derivation), :mod:`.linear_algebra`
(fraction-free determinants, adjugates, inverses), :mod:`.simplification` (exact
cancellation modulo sin² + cos² = 1), :mod:`.validation` (every refusal: shapes, symmetry,
singular or provably indefinite metrics, symbols that share a coordinate's name, a metric in
symbols other than the coordinates unless they are declared with ``parameters=``).
Layering inside the package: simplification < linear_algebra < validation, arithmetic <
geometry, fisher < attention.
"""

from .attention import *  # noqa: F403  (the attention maps, listed in attention.__all__)
from .attention import __all__ as _attention_all
from .fisher import gaussian_fisher_information, gaussian_log_density
from .geometry import (
    brioschi,
    christoffel,
    covariant_riemann,
    gaussian_curvature,
    pullback_metric,
    ricci,
    riemann,
    scalar_curvature,
    sectional_curvature,
)

__all__ = [
    "brioschi",
    "christoffel",
    "covariant_riemann",
    "gaussian_curvature",
    "gaussian_fisher_information",
    "gaussian_log_density",
    "pullback_metric",
    "ricci",
    "riemann",
    "scalar_curvature",
    "sectional_curvature",
    *_attention_all,
]
