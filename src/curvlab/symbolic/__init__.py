"""curvlab.symbolic: exact Fisher-Rao geometry in SymPy.

- :mod:`curvlab.symbolic.fisher`: the Fisher information of a Gaussian family, derived from its
  log-density (``gaussian_fisher_information``).
- :mod:`curvlab.symbolic.geometry`: pullback metrics g = Jᵀ Σ⁻¹ J and the curvature chain
  g -> Γ -> Rᵃ_bcd -> Ric -> R, with Gaussian and sectional curvature (conventions in the module
  docstring: Γᵃ_bc = ``christoffel[a, b, c]``, Rᵃ_bcd = ``riemann[a, b, c, d]``, K = 1/r² on a
  sphere of radius r).
- :mod:`curvlab.symbolic.attention`: symbolic ungated and gated attention maps.
"""

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

try:
    from .attention import *  # noqa: F403  (the attention maps, listed in attention.__all__)
    from .attention import __all__ as _attention_all
except ModuleNotFoundError as error:  # attention.py not present: the geometry stands alone
    if error.name != f"{__name__}.attention":
        raise
    _attention_all = []

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
