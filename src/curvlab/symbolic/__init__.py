"""curvlab.symbolic: exact Fisher-Rao geometry in SymPy.

- :mod:`curvlab.symbolic.fisher`: the Fisher information of a Gaussian family, derived from its
  log-density (``gaussian_fisher_information``).
- :mod:`curvlab.symbolic.connection`: pullback metrics g = Jᵀ Σ⁻¹ J and the Christoffel
  symbols Γ of their Levi-Civita connection, the first links of the curvature chain
  g -> Γ -> Rᵃ_bcd -> Ric -> R (conventions in the module docstrings: Γᵃ_bc =
  ``christoffel[a, b, c]``, Rᵃ_bcd = ``riemann[a, b, c, d]``, K = 1/r² on a sphere of radius r).
- :mod:`curvlab.symbolic.curvature`: the rest of the chain, the curvature tensors and scalars
  (Riemann, Ricci, scalar curvature), with Gaussian and sectional curvature.
- :mod:`curvlab.symbolic.attention_maps`: the ungated attention maps in their charts (weight,
  logit, input); :mod:`curvlab.symbolic.gates`: the gates and the gated maps;
  :mod:`curvlab.symbolic.stacks`: residual stacks of attention layers (tied, untied, composing).

The helpers behind them, each a module named for what it does: :mod:`.arithmetic` (the one
arithmetic: a rational function field with a derivation), :mod:`.linear_algebra`
(fraction-free determinants, adjugates, inverses), :mod:`.simplification` (exact
cancellation modulo sin² + cos² = 1), :mod:`.validation` (every refusal: shapes, symmetry,
singular or provably indefinite metrics, symbols that share a coordinate's name, a metric in
symbols other than the coordinates unless they are declared with ``parameters=``),
:mod:`.attention_inputs` (the attention maps' inputs, made exact).
Layering inside the package: simplification < linear_algebra < validation, arithmetic <
connection < curvature, fisher; attention_inputs < attention_maps, gates; attention_maps <
stacks.
"""

from .attention_maps import (
    input_attention_mean,
    simplex_weights,
    softmax_weights,
    ungated_mean,
    ungated_mean_logit_chart,
    ungated_mean_weight_chart,
)
from .connection import christoffel, pullback_metric
from .curvature import (
    brioschi,
    covariant_riemann,
    gaussian_curvature,
    ricci,
    riemann,
    scalar_curvature,
    sectional_curvature,
)
from .fisher import gaussian_fisher_information, gaussian_log_density
from .gates import elementwise_gated_mean, headwise_gated_mean, radial_gate, sigmoid, sigmoid_gate
from .stacks import (
    composing_layer,
    composing_stack,
    residual_attention_layer,
    structured_stack,
    unstructured_stack,
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
    # the attention maps, their gates and their stacks
    "composing_layer",
    "composing_stack",
    "elementwise_gated_mean",
    "headwise_gated_mean",
    "input_attention_mean",
    "radial_gate",
    "residual_attention_layer",
    "sigmoid",
    "sigmoid_gate",
    "simplex_weights",
    "softmax_weights",
    "structured_stack",
    "ungated_mean",
    "ungated_mean_logit_chart",
    "ungated_mean_weight_chart",
    "unstructured_stack",
]
