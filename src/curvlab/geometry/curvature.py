"""Riemannian curvature of any differentiable map, by automatic differentiation (PyTorch).

A map ``f`` takes one point, a tensor of shape (k,), to a tensor of shape (d,); ``u`` holds the
points, shape (..., k).  With the fixed covariance Σ = ``cov`` (identity when None), the family
u ↦ N(f(u), Σ) has the Fisher–Rao metric g = Jᵀ Σ⁻¹ J.  Whitening by the Cholesky factor
(Σ = L Lᵀ, f̃ = L⁻¹ f) makes that an ordinary Euclidean submanifold, and the curvature follows
from first and second derivatives only, through the Gauss equation::

    J = ∂f̃ (d, k),  H = ∂²f̃ (d, k, k)                  torch.func.jacfwd twice, vmap over points
    J = Q R (QR, Q: d×k orthonormal)                      the tangent space, without forming g⁻¹
    II_ab = (I − Q Qᵀ) H_ab                               second fundamental form (normal part)
    R_abcd = ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩               Gauss equation: covariant Riemann

Conventions (the same as :mod:`curvlab.symbolic`): R_abcd = g_ae Rᵉ_bcd = ⟨R(∂_c, ∂_d)∂_b, ∂_a⟩,
sectional K(X, Y) = R_abcd Xᵃ Yᵇ Xᶜ Yᵈ / (|X|²|Y|² − ⟨X, Y⟩²), scalar R = gᵃᶜ gᵇᵈ R_abcd, and in
two dimensions K = R_0101 / det g = R / 2.  A round sphere of radius r has K = 1/r².

Public functions: :func:`metric`, :func:`second_fundamental_form`, :func:`riemann_tensor`,
:func:`sectional_curvature`, :func:`scalar_curvature`, :func:`gaussian_curvature` (the
signatures of the design), :func:`immersion_mask` (where curvature is defined) and
:func:`lambdify_map` (a SymPy embedding as a torch map, to compare with :mod:`curvlab.symbolic`).
Each also takes the keywords ``dtype`` and ``chunk_size`` (passed to ``torch.func.vmap`` to
bound memory on large batches).

The Gauss-equation engine these functions share (batched derivatives, whitening, the
immersion test, II and the curvature formulas) is :mod:`curvlab.geometry.gauss_equation`.

Numerics: every input (``u``, ``cov``) is cast to ``dtype``, float64 by default
(``dtype=torch.float32`` on request; ``dtype=None`` keeps u's floating dtype), and ``f`` must
accept and return that dtype (call ``.double()`` on an nn.Module, and ``.eval()``: vmap does
not allow dropout's randomness).  Results live on ``u``'s device (CPU or CUDA).  The
normal projection comes from a QR factorisation of J, not from g⁻¹ = (JᵀJ)⁻¹, because
cond(g) = cond(J)².  A point where J has σ_min/σ_max below :data:`IMMERSION_TOLERANCE` (1e-7
in float64, 1e-3 in float32) is not an immersion: curvature is undefined there, and every
function raises a ValueError that lists those points (use :func:`immersion_mask` to select
the good ones first).  Nothing returns a silent NaN or inf.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from curvlab.geometry.gauss_equation import (
    IMMERSION_TOLERANCE,
    Map,
    PointBatch,
    check_finite,
    check_immersion,
    checked_jets,
    describe_indices,
    gauss_equation,
    gaussian_from_frame,
    immersion_ratio,
    jacobians,
    normal_part,
    orthonormal_frame_form,
    scalar_from_frame,
)

__all__ = [
    "IMMERSION_TOLERANCE",
    "gaussian_curvature",
    "immersion_mask",
    "lambdify_map",
    "metric",
    "riemann_tensor",
    "scalar_curvature",
    "second_fundamental_form",
    "sectional_curvature",
]

# ---------------------------------------------------------------------------------------------
# public API


def _constant_safe(function: Callable) -> Callable:
    """The torch function, also accepting Python numbers (SymPy constants such as sqrt(2))."""

    def safe(value):
        if not isinstance(value, torch.Tensor):
            value = torch.tensor(value, dtype=torch.float64)
        return function(value)

    return safe


_TORCH_FUNCTIONS = {
    name: _constant_safe(getattr(torch, name))
    for name in ("sqrt", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan")
}


def lambdify_map(embedding, coords) -> Map:
    """A torch map f for this module from a SymPy column ``embedding`` (d×1) in ``coords``.

    ``f(x)`` takes a tensor of shape (k,), k = len(coords), and returns shape (d,) in x's dtype,
    so the curvature of any map written in :mod:`curvlab.symbolic` can be computed here and
    compared with the exact result.  Uses ``sympy.lambdify`` with the torch printer.

    >>> import sympy as sp, torch
    >>> u, v = sp.symbols("u v", real=True)
    >>> f = lambdify_map(sp.Matrix([u, v, u * v]), [u, v])
    >>> f(torch.tensor([2.0, 3.0], dtype=torch.float64))
    tensor([2., 3., 6.], dtype=torch.float64)
    """
    import sympy as sp

    try:
        column = sp.Matrix(embedding)
    except (TypeError, ValueError, sp.SympifyError) as error:
        raise TypeError(
            f"embedding: expected a SymPy column Matrix, got {type(embedding)!r}"
        ) from error
    if column.shape[1] != 1:
        column = column.reshape(len(column), 1) if 1 in column.shape else None
    if column is None:
        raise ValueError(
            f"embedding: expected a column (d×1), got shape {sp.Matrix(embedding).shape}"
        )
    symbols = list(coords)
    if not symbols or not all(isinstance(c, sp.Symbol) for c in symbols):
        raise TypeError(f"coords: expected a nonempty sequence of SymPy Symbols, got {coords!r}")
    k = len(symbols)
    entries = list(column)
    generated = sp.lambdify(symbols, entries, modules=[_TORCH_FUNCTIONS, "torch"])

    def f(x: torch.Tensor) -> torch.Tensor:
        if x.shape != (k,):
            raise ValueError(
                f"x: expected shape ({k},) for coordinates {symbols}, got {tuple(x.shape)}"
            )
        zero = x[0] * 0  # carries vmap's batch and the dtype/device of x
        values = generated(*x.unbind(0))
        return torch.stack([torch.as_tensor(v).to(x) + zero for v in values])

    return f


def immersion_mask(f: Map, u, cov=None, *, tol=None, dtype=torch.float64, chunk_size=None):
    """True where f is an immersion at u: σ_min(J̃)/σ_max(J̃) ≥ tol, J̃ = L⁻¹ J, shape (...).

    ``tol`` defaults to :data:`IMMERSION_TOLERANCE` for the dtype, the threshold below which
    every curvature function of this module raises.  Points where f or J is not finite count as
    not immersed.  Use it to keep the points where curvature is defined.

    >>> import torch
    >>> polar = lambda x: torch.stack([x[0] * torch.cos(x[1]), x[0] * torch.sin(x[1])])
    >>> immersion_mask(polar, torch.tensor([[1.0, 0.3], [0.0, 0.3]])).tolist()
    [True, False]
    """
    batch = PointBatch(f, u, cov, dtype)
    tolerance = batch.tolerance if tol is None else float(tol)
    jacobian = jacobians(f, batch.flat, chunk_size)
    finite = torch.isfinite(jacobian.reshape(jacobian.shape[0], -1)).all(dim=1)
    jacobian = batch.whiten(torch.where(finite[:, None, None], jacobian, 0.0))
    mask = finite & (immersion_ratio(jacobian) >= tolerance)
    return mask.reshape(batch.leading_shape)


def metric(f: Map, u, cov=None, *, dtype=torch.float64, chunk_size=None) -> torch.Tensor:
    """The Fisher–Rao (pullback) metric g = Jᵀ Σ⁻¹ J at every point, shape (..., k, k).

    J = ∂f/∂u (d×k) by forward-mode autodiff; Σ = ``cov`` (d×d, symmetric positive definite,
    identity when None).  ``dtype`` (float64 by default) is the dtype of the computation,
    ``chunk_size`` is passed to ``torch.func.vmap`` to bound memory.  Raises ValueError where f
    is not an immersion.

    >>> import torch
    >>> saddle = lambda x: torch.stack([x[0], x[1], x[0] * x[1]])  # g = [[1+v², uv], [uv, 1+u²]]
    >>> metric(saddle, torch.tensor([1.0, 2.0]))
    tensor([[5., 2.],
            [2., 2.]], dtype=torch.float64)
    """
    batch = PointBatch(f, u, cov, dtype)
    jacobian = jacobians(f, batch.flat, chunk_size)  # (N, d, k)
    check_finite(batch, jacobian)
    jacobian = batch.whiten(jacobian)
    check_immersion(batch, jacobian)
    return batch.unflatten(jacobian.mT @ jacobian)  # (..., k, k)


def second_fundamental_form(f: Map, u, cov=None, *, dtype=torch.float64, chunk_size=None):
    """The second fundamental form II_ab = (I − Q Qᵀ) ∂_a∂_b f̃, shape (..., k, k, d).

    f̃ = L⁻¹ f is the whitened map (Σ = L Lᵀ), Q an orthonormal basis of its tangent space
    (QR of J̃), so ``result[..., a, b, :]`` is the normal part of the Hessian, in whitened
    ambient coordinates.  Symmetric in (a, b).

    >>> import torch
    >>> saddle = lambda x: torch.stack([x[0], x[1], x[0] * x[1]])
    >>> second_fundamental_form(saddle, torch.zeros(2))[0, 1]
    tensor([0., 0., 1.], dtype=torch.float64)
    """
    batch = PointBatch(f, u, cov, dtype)
    jacobian, hessian = checked_jets(batch, chunk_size)
    return batch.unflatten(normal_part(jacobian, hessian))


def riemann_tensor(f: Map, u, cov=None, *, dtype=torch.float64, chunk_size=None) -> torch.Tensor:
    """The covariant Riemann tensor R_abcd by the Gauss equation, shape (..., k, k, k, k).

    R_abcd = ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩ = g_ae Rᵉ_bcd = ⟨R(∂_c, ∂_d)∂_b, ∂_a⟩, index for
    index the tensor ``curvlab.symbolic.covariant_riemann`` gives.  Antisymmetric in (a, b) and
    in (c, d), symmetric under (ab) ↔ (cd).  On a sphere of radius r, R_0101 = det g / r².

    >>> import torch
    >>> sphere = lambda x: 2 * torch.stack(
    ...     [torch.sin(x[0]) * torch.cos(x[1]), torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])]
    ... )
    >>> round(float(riemann_tensor(sphere, torch.tensor([torch.pi / 2, 0.0]))[0, 1, 0, 1]), 12)
    4.0
    """
    batch = PointBatch(f, u, cov, dtype)
    jacobian, hessian = checked_jets(batch, chunk_size)
    return batch.unflatten(gauss_equation(normal_part(jacobian, hessian)))


def sectional_curvature(
    f: Map, u, X, Y, cov=None, *, dtype=torch.float64, chunk_size=None
) -> torch.Tensor:
    """Sectional curvature of the plane spanned by X and Y at every point, shape (...).

    K(X, Y) = R_abcd Xᵃ Yᵇ Xᶜ Yᵈ / (|X|²|Y|² − ⟨X, Y⟩²), lengths in the metric g.  X and Y are
    tangent vectors in coordinate components, shape (k,) or broadcastable to u's (..., k).
    Raises ValueError where X and Y are (numerically) parallel.  In two dimensions every plane
    gives the Gaussian curvature.

    >>> import torch
    >>> sphere = lambda x: 2 * torch.stack(
    ...     [torch.sin(x[0]) * torch.cos(x[1]), torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])]
    ... )
    >>> X, Y = torch.tensor([1.0, 0.0]), torch.tensor([1.0, 1.0])
    >>> round(float(sectional_curvature(sphere, torch.tensor([1.0, 0.5]), X, Y)), 12)
    0.25
    """
    batch = PointBatch(f, u, cov, dtype)
    vectors = []
    for name, vector in (("X", X), ("Y", Y)):
        vector = torch.as_tensor(vector, dtype=batch.flat.dtype, device=batch.flat.device)
        try:
            vector = torch.broadcast_to(vector, (*batch.leading_shape, batch.k))
        except RuntimeError as error:
            raise ValueError(
                f"{name}: expected shape ({batch.k},) or broadcastable to "
                f"{(*batch.leading_shape, batch.k)}, got {tuple(vector.shape)}"
            ) from error
        if not torch.isfinite(vector).all():
            raise ValueError(f"{name}: must be finite (found NaN or inf)")
        vectors.append(vector.reshape(-1, batch.k))
    x, y = vectors  # (N, k) each
    jacobian, hessian = checked_jets(batch, chunk_size)
    riemann = gauss_equation(normal_part(jacobian, hessian))  # (N, k, k, k, k)
    numerator = torch.einsum("nabcd,na,nb,nc,nd->n", riemann, x, y, x, y)
    tx, ty = torch.einsum("ndk,nk->nd", jacobian, x), torch.einsum("ndk,nk->nd", jacobian, y)
    xx, yy, xy = (tx * tx).sum(-1), (ty * ty).sum(-1), (tx * ty).sum(-1)
    area_squared = xx * yy - xy**2
    parallel = ~(area_squared > batch.tolerance**2 * xx * yy)
    if parallel.any():
        raise ValueError(
            f"X, Y: must span a plane (be linearly independent) at every point; they are "
            f"parallel or zero at {describe_indices(parallel, batch.leading_shape)}"
        )
    return batch.unflatten(numerator / area_squared)


def scalar_curvature(f: Map, u, cov=None, *, dtype=torch.float64, chunk_size=None) -> torch.Tensor:
    """The scalar curvature R = gᵃᶜ gᵇᵈ R_abcd at every point, shape (...).

    Computed in an orthonormal tangent frame (from the QR of J̃, no g⁻¹):
    R = |H⃗|² − Σ_ij |II_ij|² with H⃗ = Σ_i II_ii.  A round k-sphere of radius r has
    R = k(k − 1)/r²; in two dimensions R = 2K.

    >>> import torch
    >>> def three_sphere(x):  # radius 2 in R^4, hyperspherical coordinates
    ...     s0, s1 = torch.sin(x[0]), torch.sin(x[1])
    ...     return 2 * torch.stack([torch.cos(x[0]), s0 * torch.cos(x[1]),
    ...                             s0 * s1 * torch.cos(x[2]), s0 * s1 * torch.sin(x[2])])
    >>> round(float(scalar_curvature(three_sphere, torch.tensor([1.0, 1.2, 0.3]))), 12)
    1.5
    """
    batch = PointBatch(f, u, cov, dtype)
    jacobian, hessian = checked_jets(batch, chunk_size)
    frame = orthonormal_frame_form(jacobian, normal_part(jacobian, hessian))
    return batch.unflatten(scalar_from_frame(frame))


def gaussian_curvature(f: Map, u, cov=None, *, dtype=torch.float64, chunk_size=None):
    """The Gaussian curvature K = R_0101 / det g of a surface (k == 2), shape (...).

    Computed in an orthonormal tangent frame: K = ⟨II_11, II_22⟩ − |II_12|², any codimension.
    Raises ValueError unless u has last dimension 2.  K = 1/r² on a sphere of radius r; with
    ``cov = s² I`` every K is multiplied by s².

    >>> import torch
    >>> saddle = lambda x: torch.stack([x[0], x[1], x[0] * x[1]])
    >>> gaussian_curvature(saddle, torch.tensor([[0.0, 0.0], [1.0, 1.0]]))
    tensor([-1.0000, -0.1111], dtype=torch.float64)
    """
    batch = PointBatch(f, u, cov, dtype)
    if batch.k != 2:
        raise ValueError(
            f"u: gaussian_curvature needs points of a surface, shape (..., 2), got k = {batch.k}; "
            "use sectional_curvature or scalar_curvature in higher dimensions"
        )
    jacobian, hessian = checked_jets(batch, chunk_size)
    frame = orthonormal_frame_form(jacobian, normal_part(jacobian, hessian))
    return batch.unflatten(gaussian_from_frame(frame))
