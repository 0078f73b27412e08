"""Ungated attention read as a function of its input: a search for a curved input slice.

With fixed values, ungated attention is flat in the weight chart (T1).  Read through its input,
x ∈ ℝ² ↦ μ(x) = Σᵢ softmax(K x)ᵢ Uᵢ (:func:`curvlab.symbolic.input_attention_mean`, in the
rational chart t = eˣ), it can be curved without any gate.  :func:`curved_ungated_slice` finds
such a slice by drawing integer values U and keys K from a seed until the torch engine
(:func:`curvlab.curvature.gaussian_curvature`) finds |K| > ``tolerance`` at a sample point;
:func:`chart_points` gives those sample points.  The draws are the book's, not the paper's.
"""

from __future__ import annotations

import torch

__all__ = ["chart_points", "curved_ungated_slice"]


def chart_points(n: int = 100, half_width: float = 0.8, seed: int = 0) -> torch.Tensor:
    """``n`` seeded points t = eˣ of the rational chart, x uniform in [−half_width, half_width]².

    >>> t = chart_points(5)
    >>> tuple(t.shape), t.dtype, bool((t > 0).all())
    ((5, 2), torch.float64, True)
    """
    g = torch.Generator().manual_seed(seed)
    x = 2 * half_width * torch.rand(n, 2, generator=g, dtype=torch.float64) - half_width
    return torch.exp(x)  # (n, 2)


def curved_ungated_slice(
    n_values: int,
    dim: int,
    seed: int,
    points: torch.Tensor | None = None,
    tolerance: float = 1e-3,
) -> torch.Tensor:
    """Gaussian curvature K (n,) at ``points`` of the first curved ungated input slice drawn.

    Values U (``n_values`` × ``dim``) and keys K (``n_values`` × 2) are integers in −2..2, drawn
    in turn from ``seed``; the first draw whose slice has max |K| > ``tolerance`` over
    ``points`` (default :func:`chart_points`) is returned.  Some draws are flat (e.g. all
    values equal), so the search may take a few draws.

    >>> K = curved_ungated_slice(4, 3, seed=0)
    >>> tuple(K.shape), float(K.abs().max()) > 1e-3
    ((100,), True)
    """
    from curvlab.geometry.curvature import gaussian_curvature, lambdify_map
    from curvlab.symbolic import input_attention_mean

    points = chart_points() if points is None else points
    g = torch.Generator().manual_seed(seed)
    while True:
        values = torch.randint(-2, 3, (n_values, dim), generator=g).tolist()
        keys = torch.randint(-2, 3, (n_values, 2), generator=g).tolist()
        K = gaussian_curvature(lambdify_map(*input_attention_mean(values, keys)), points)
        if float(K.abs().max()) > tolerance:
            return K
