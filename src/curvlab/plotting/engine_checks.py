"""What the curvature engine computes, drawn: K on a surface beside its error against the truth.

- :func:`plot_curvature_against_closed_form`  for each named surface ``f`` with a closed-form
  ``K(u, v)``: the surface coloured by the K that :func:`curvlab.curvature.gaussian_curvature`
  returns on a grid of its chart, beside ``log10`` of the relative error against the closed form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import matplotlib.pyplot as plt
import numpy as np
import torch

from curvlab.geometry.curvature import gaussian_curvature
from curvlab.plotting.curvature_maps import plot_curvature_surface

__all__ = ["plot_curvature_against_closed_form"]

# A relative error below this is drawn at this value (a log scale has no zero).
ERROR_FLOOR = 1e-17


def plot_curvature_against_closed_form(
    surfaces: Mapping[str, tuple[Callable, Callable, tuple[tuple[float, float], ...]]],
    *,
    resolution: int = 41,
):
    """One row per surface ``name -> (f, closed_form, ((u0, u1), (v0, v1)))``.

    ``f`` maps a float64 point (2,) to (d,); ``closed_form(u, v)`` gives the exact K on tensors.
    Left: the first three coordinates of ``f`` coloured by the engine's K. Right: ``log10`` of
    ``|K - K_exact| / |K_exact|`` over the chart. Returns ``(fig, worst)``, ``worst`` the largest
    relative error of each surface on the grid.

    >>> import torch
    >>> saddle = lambda x: torch.stack([x[0], x[1], x[0] * x[1]])
    >>> exact = lambda u, v: -1 / (1 + u**2 + v**2) ** 2
    >>> fig, worst = plot_curvature_against_closed_form(
    ...     {"saddle": (saddle, exact, ((-1, 1), (-1, 1)))}, resolution=5)
    >>> worst["saddle"] < 1e-12
    True
    >>> plt.close(fig)
    """
    if not surfaces:
        raise ValueError("surfaces: give at least one surface")
    fig = plt.figure(figsize=(10.0, 4.0 * len(surfaces)))
    worst = {}
    for row, (name, (f, closed_form, bounds)) in enumerate(surfaces.items()):
        (u0, u1), (v0, v1) = bounds
        u_axis = torch.linspace(u0, u1, resolution, dtype=torch.float64)
        v_axis = torch.linspace(v0, v1, resolution, dtype=torch.float64)
        u, v = torch.meshgrid(u_axis, v_axis, indexing="ij")
        chart = torch.stack([u, v], dim=-1)  # (n, n, 2)
        K = gaussian_curvature(f, chart)  # (n, n)
        exact = closed_form(u, v)
        relative = ((K - exact).abs() / exact.abs()).numpy()
        worst[name] = float(relative.max())
        points = torch.stack([f(x) for x in chart.reshape(-1, 2)]).reshape(*chart.shape[:2], -1)
        points = points.numpy()
        surface_axes = fig.add_subplot(len(surfaces), 2, 2 * row + 1, projection="3d")
        plot_curvature_surface(
            points[..., 0], points[..., 1], points[..., 2], K.numpy(), ax=surface_axes
        )
        surface_axes.set_title(f"{name}: K from autodiff", fontsize=10)
        error_axes = fig.add_subplot(len(surfaces), 2, 2 * row + 2)
        mesh = error_axes.pcolormesh(
            u.numpy(), v.numpy(), np.log10(np.maximum(relative, ERROR_FLOOR)), cmap="viridis"
        )
        fig.colorbar(mesh, ax=error_axes, label=r"$\log_{10}$ relative error of K")
        error_axes.set(
            xlabel="chart $u$",
            ylabel="chart $v$",
            title=f"{name}: error against the closed form (max {worst[name]:.1e})",
        )
    fig.tight_layout()
    return fig, worst
