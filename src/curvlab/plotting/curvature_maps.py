"""Curvature drawn the same way everywhere: colours symmetric about K = 0, white means flat.

- :func:`curvature_norm`  a colour normalisation symmetric about K = 0.
- :func:`plot_curvature_surface`  a 3-D surface coloured by its curvature, with a labelled colorbar.
- :func:`plot_curvature_map`  the same curvature as a flat map over the chart, K = 0 contour drawn.
"""

from __future__ import annotations

import math

import matplotlib as mpl
import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np

from curvlab.plotting.inputs import as_float_array, finite_grid
from curvlab.plotting.style import COLORS, CURVATURE_CMAP

__all__ = [
    "curvature_norm",
    "plot_curvature_map",
    "plot_curvature_surface",
]


def curvature_norm(values: object, halfrange: float | None = None) -> mcolors.Normalize:
    """A colour normalisation centred at K = 0 and symmetric: ``[-h, h]`` with ``h = max|K|``.

    Symmetry makes white mean flat and equal saturation mean equal ``|K|`` on both sides. When
    every value is 0 (a flat surface) ``h`` is 1, so the surface is drawn white, not undefined.
    Pass ``halfrange`` to fix the scale (e.g. to compare several panels or animation frames).

    >>> norm = curvature_norm([-0.5, 0.0, 2.0])
    >>> float(norm.vmin), float(norm.vmax), float(norm(0.0))
    (-2.0, 2.0, 0.5)
    >>> float(curvature_norm([0.0, 0.0]).vmax)
    1.0
    """
    if halfrange is None:
        array = as_float_array("values", values)
        if array.size == 0:
            raise ValueError("values must contain at least one curvature value")
        if not np.all(np.isfinite(array)):
            raise ValueError("values must contain only finite numbers (found NaN or inf)")
        peak = float(np.max(np.abs(array)))
        halfrange = peak if peak > 0.0 else 1.0
    elif not (isinstance(halfrange, int | float) and math.isfinite(halfrange) and halfrange > 0):
        raise ValueError(f"halfrange must be a positive finite number, got {halfrange!r}")
    return mcolors.Normalize(vmin=-float(halfrange), vmax=float(halfrange))


def plot_curvature_surface(
    x: object,
    y: object,
    z: object,
    curvature: object,
    *,
    ax: object | None = None,
    title: str | None = None,
    colorbar_label: str = "Gaussian curvature $K$",
    axis_labels: tuple[str, str, str] = ("$y_1$", "$y_2$", "$y_3$"),
    halfrange: float | None = None,
    colorbar: bool = True,
):
    """Draw the surface ``(x, y, z)`` (2-D grids) coloured by ``curvature`` on the same grid.

    Colours use :data:`CURVATURE_CMAP` with :func:`curvature_norm` (centred at 0, symmetric),
    and a colorbar labelled ``colorbar_label`` is attached unless ``colorbar=False``.
    Returns ``(fig, ax, mappable)``; pass ``ax`` (a 3-D axes) to draw into an existing figure.

    >>> u, v = np.meshgrid(np.linspace(-1, 1, 9), np.linspace(-1, 1, 9))
    >>> fig, ax, mappable = plot_curvature_surface(u, v, u**2 + v**2, 4 / (1 + 4*(u**2 + v**2))**2)
    >>> ax.name, mappable.norm.vmin == -mappable.norm.vmax
    ('3d', True)
    >>> plt.close(fig)
    """
    x_grid = finite_grid("x", x)
    y_grid = finite_grid("y", y, x_grid.shape)
    z_grid = finite_grid("z", z, x_grid.shape)
    k_grid = finite_grid("curvature", curvature, x_grid.shape)
    norm = curvature_norm(k_grid, halfrange)
    cmap = mpl.colormaps[CURVATURE_CMAP]
    if ax is None:
        fig = plt.figure(figsize=(6.4, 4.8))
        ax = fig.add_subplot(projection="3d")
    else:
        if getattr(ax, "name", None) != "3d":
            raise ValueError("ax must be a 3-D axes (add_subplot(projection='3d'))")
        fig = ax.figure
    ax.plot_surface(
        x_grid,
        y_grid,
        z_grid,
        facecolors=cmap(norm(k_grid)),
        rstride=1,
        cstride=1,
        linewidth=0.2,
        edgecolor=(0.3, 0.3, 0.3, 0.25),
        antialiased=True,
        shade=False,
    )
    for axis, label in zip((ax.xaxis, ax.yaxis, ax.zaxis), axis_labels, strict=True):
        axis.set_major_locator(mpl.ticker.MaxNLocator(4))  # few ticks: labels do not collide
        axis.set_label_text(label)
    ax.tick_params(labelsize=8)
    if title is not None:
        ax.set_title(title)
    mappable = mpl.cm.ScalarMappable(norm=norm, cmap=cmap)
    mappable.set_array(k_grid)
    if colorbar:
        fig.colorbar(mappable, ax=ax, shrink=0.7, pad=0.1, label=colorbar_label)
    return fig, ax, mappable


def plot_curvature_map(
    u: object,
    v: object,
    curvature: object,
    *,
    ax: object | None = None,
    title: str | None = None,
    colorbar_label: str = "Gaussian curvature $K$",
    axis_labels: tuple[str, str] = ("$u$", "$v$"),
    halfrange: float | None = None,
    zero_contour: bool = True,
    colorbar: bool = True,
):
    """Draw ``curvature`` over the chart grid ``(u, v)`` as a coloured map, K = 0 contour in black.

    Same colormap and centred normalisation as :func:`plot_curvature_surface`, so the sign of K
    reads the same in both. The zero contour is drawn only where K changes sign on the grid by
    more than rounding (|K| > 1e-9 on both sides), so a flat surface shows no contour.
    Returns ``(fig, ax, mappable)``.

    >>> u, v = np.meshgrid(np.linspace(-1, 1, 11), np.linspace(-1, 1, 11))
    >>> fig, ax, mesh = plot_curvature_map(u, v, u * v)
    >>> float(mesh.norm.vmax), ax.get_xlabel()
    (1.0, '$u$')
    >>> plt.close(fig)
    """
    u_grid = finite_grid("u", u)
    v_grid = finite_grid("v", v, u_grid.shape)
    k_grid = finite_grid("curvature", curvature, u_grid.shape)
    norm = curvature_norm(k_grid, halfrange)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.6, 4.4))
    else:
        fig = ax.figure
    mesh = ax.pcolormesh(u_grid, v_grid, k_grid, cmap=CURVATURE_CMAP, norm=norm, shading="auto")
    # Only where K really changes sign: rounding noise around a flat surface draws no contour.
    noise = 1e-9 * max(1.0, norm.vmax)
    if zero_contour and k_grid.min() < -noise and k_grid.max() > noise:
        ax.contour(u_grid, v_grid, k_grid, levels=[0.0], colors=COLORS["reference"], linewidths=1)
    ax.set_xlabel(axis_labels[0])
    ax.set_ylabel(axis_labels[1])
    ax.set_aspect("equal", adjustable="box")
    ax.grid(False)
    if title is not None:
        ax.set_title(title)
    if colorbar:
        fig.colorbar(mesh, ax=ax, label=colorbar_label)
    return fig, ax, mesh
