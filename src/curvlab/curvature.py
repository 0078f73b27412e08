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

import numpy as np
import torch
from torch.func import jacfwd, vmap

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

IMMERSION_TOLERANCE: dict[torch.dtype, float] = {torch.float64: 1e-7, torch.float32: 1e-3}
"""Smallest σ_min(J)/σ_max(J) accepted as an immersion, per dtype (J whitened by Σ)."""

Map = Callable[[torch.Tensor], torch.Tensor]

# ---------------------------------------------------------------------------------------------
# input checking


def _resolve_dtype(u, dtype) -> torch.dtype:
    if dtype is None:
        if isinstance(u, torch.Tensor) and u.dtype in IMMERSION_TOLERANCE:
            return u.dtype
        return torch.float64
    if dtype not in IMMERSION_TOLERANCE:
        raise TypeError(f"dtype: expected torch.float64 or torch.float32, got {dtype}")
    return dtype


def _as_points(u, dtype) -> torch.Tensor:
    """u as a floating tensor of shape (..., k), k >= 1, on its own device."""
    if isinstance(u, torch.Tensor):
        if u.is_complex() or u.dtype == torch.bool:
            raise TypeError(f"u: expected a real tensor of shape (..., k), got dtype {u.dtype}")
        points = u.to(dtype)
    else:
        try:
            points = torch.as_tensor(np.asarray(u, dtype=np.float64), dtype=dtype)
        except (TypeError, ValueError) as error:
            raise TypeError(f"u: expected a tensor of shape (..., k), got {type(u)!r}") from error
    if points.ndim == 0 or points.shape[-1] == 0:
        raise ValueError(f"u: expected shape (..., k) with k >= 1, got {tuple(points.shape)}")
    if points[..., 0].numel() == 0:
        raise ValueError(f"u: expected at least one point, got shape {tuple(points.shape)}")
    if not torch.isfinite(points).all():
        raise ValueError("u: the points must be finite (found NaN or inf)")
    return points


def _output_dimension(f: Map, point: torch.Tensor) -> int:
    """Evaluate f at one point and check it returns a tensor of shape (d,), d >= k."""
    if not callable(f):
        raise TypeError(f"f: expected a callable mapping a tensor (k,) to (d,), got {type(f)!r}")
    k = point.shape[-1]
    try:
        value = f(point)
    except RuntimeError as error:
        raise TypeError(
            f"f: calling f on one point of shape ({k},), dtype {point.dtype}, device "
            f"{point.device} failed ({error}); f must accept that dtype and device (for an "
            "nn.Module, call .double() and .to(device), or pass dtype=)"
        ) from error
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"f: must return a torch.Tensor of shape (d,), got {type(value)!r}")
    if value.ndim != 1:
        raise ValueError(
            f"f: must map one point of shape ({k},) to shape (d,), got {tuple(value.shape)}"
        )
    if value.dtype != point.dtype:
        raise TypeError(f"f: returned dtype {value.dtype} for an input of dtype {point.dtype}")
    d = value.shape[0]
    if d < k:
        raise ValueError(
            f"f: maps R^{k} to R^{d}, and a k-dimensional immersion needs k <= d (k = {k}, d = {d})"
        )
    return d


def _cholesky_factor(cov, d: int, like: torch.Tensor) -> torch.Tensor | None:
    """Lower Cholesky factor L of cov (L Lᵀ = Σ), or None for the identity."""
    if cov is None:
        return None
    sigma = torch.as_tensor(cov, dtype=like.dtype, device=like.device)
    if sigma.shape != (d, d):
        raise ValueError(
            f"cov: expected shape ({d}, {d}) for f with d = {d}, got {tuple(sigma.shape)}"
        )
    if not torch.isfinite(sigma).all():
        raise ValueError("cov: must be finite (found NaN or inf)")
    scale = sigma.abs().max()
    if (sigma - sigma.mT).abs().max() > 1e-10 * scale:
        raise ValueError("cov: must be symmetric positive definite (it is not symmetric)")
    factor, info = torch.linalg.cholesky_ex(sigma)
    if info.item() != 0 or scale == 0:
        raise ValueError("cov: must be symmetric positive definite (Cholesky factorisation failed)")
    return factor


def _indices(flat: torch.Tensor, shape: torch.Size, limit: int = 10) -> str:
    """The multi-indices (into u's leading shape) of the True entries of a flat mask."""
    where = torch.nonzero(flat).flatten().cpu().numpy()
    if len(shape) == 0:
        return "the single point u"
    listed = [tuple(int(i) for i in np.unravel_index(n, tuple(shape))) for n in where[:limit]]
    more = f" and {len(where) - limit} more" if len(where) > limit else ""
    return f"indices {listed}{more}"


class _Setup:
    """Checked inputs: flat points (N, k), leading shape, d, Cholesky factor of cov."""

    def __init__(self, f: Map, u, cov, dtype):
        dtype = _resolve_dtype(u, dtype)
        points = _as_points(u, dtype)
        self.f = f
        self.leading_shape = points.shape[:-1]
        self.k = points.shape[-1]
        self.flat = points.reshape(-1, self.k)  # (N, k)
        self.d = _output_dimension(f, self.flat[0])
        self.factor = _cholesky_factor(cov, self.d, self.flat)
        self.tolerance = IMMERSION_TOLERANCE[dtype]

    def whiten(self, tensor: torch.Tensor) -> torch.Tensor:
        """L⁻¹ applied to the second axis (the output index) of (N, d, ...)."""
        if self.factor is None:
            return tensor
        shape = tensor.shape
        solved = torch.linalg.solve_triangular(
            self.factor, tensor.reshape(shape[0], self.d, -1), upper=False
        )
        return solved.reshape(shape)

    def unflatten(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor.reshape((*self.leading_shape, *tensor.shape[1:]))


# ---------------------------------------------------------------------------------------------
# derivatives and the Gauss equation (flat batches: N points)


def _jacobians(f: Map, points: torch.Tensor, chunk_size) -> torch.Tensor:
    return vmap(jacfwd(f), chunk_size=chunk_size)(points)  # (N, d, k)


def _jets(f: Map, points: torch.Tensor, chunk_size) -> tuple[torch.Tensor, torch.Tensor]:
    """J (N, d, k) and H (N, d, k, k) with H[n, i, a, b] = ∂_a ∂_b f^i at points[n]."""

    def jacobian_twice(x):
        jacobian = jacfwd(f)(x)
        return jacobian, jacobian

    def jet(x):
        hessian, jacobian = jacfwd(jacobian_twice, has_aux=True)(x)
        return jacobian, hessian

    return vmap(jet, chunk_size=chunk_size)(points)


def _check_finite(setup: _Setup, *tensors: torch.Tensor) -> None:
    bad = torch.zeros(setup.flat.shape[0], dtype=torch.bool, device=setup.flat.device)
    for tensor in tensors:
        bad |= ~torch.isfinite(tensor.reshape(tensor.shape[0], -1)).all(dim=1)
    if bad.any():
        raise ValueError(
            f"f: its value or derivatives are not finite at {int(bad.sum())} point(s) of u, "
            f"at {_indices(bad, setup.leading_shape)}"
        )


def _immersion_ratio(jacobian: torch.Tensor) -> torch.Tensor:
    """σ_min(J)/σ_max(J) per point, 0 where J = 0."""
    singular = torch.linalg.svdvals(jacobian)  # (N, k), descending
    largest = singular[:, 0]
    return torch.where(largest > 0, singular[:, -1] / largest.clamp_min(1e-300), 0.0)


def _check_immersion(setup: _Setup, jacobian: torch.Tensor) -> None:
    bad = ~(_immersion_ratio(jacobian) >= setup.tolerance)
    if bad.any():
        raise ValueError(
            f"u: f is not an immersion at {int(bad.sum())} point(s) (σ_min/σ_max of the whitened "
            f"Jacobian below {setup.tolerance:g}), at {_indices(bad, setup.leading_shape)}; "
            "curvature is undefined there (select points with immersion_mask)"
        )


def _checked_jets(setup: _Setup, chunk_size) -> tuple[torch.Tensor, torch.Tensor]:
    jacobian, hessian = _jets(setup.f, setup.flat, chunk_size)
    _check_finite(setup, jacobian, hessian)
    jacobian, hessian = setup.whiten(jacobian), setup.whiten(hessian)
    _check_immersion(setup, jacobian)
    return jacobian, hessian


def _normal_part(jacobian: torch.Tensor, hessian: torch.Tensor) -> torch.Tensor:
    """II (N, k, k, d): (I − Q Qᵀ) H with J = Q R, the component of H normal to the tangents."""
    q, _ = torch.linalg.qr(jacobian)  # (N, d, k)
    tangential = torch.einsum("ndk,ndab->nkab", q, hessian)  # (N, k, k, k)
    normal = hessian - torch.einsum("ndk,nkab->ndab", q, tangential)  # (N, d, k, k)
    return normal.permute(0, 2, 3, 1)  # (N, k, k, d)


def _orthonormal_frame_form(jacobian: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """II in an orthonormal tangent frame e_i = ∂_a W_ai (J W = Q, W = R⁻¹): (N, k, k, d)."""
    _, upper = torch.linalg.qr(jacobian)  # (N, k, k)
    eye = torch.eye(upper.shape[-1], dtype=upper.dtype, device=upper.device).expand_as(upper)
    inverse = torch.linalg.solve_triangular(upper, eye, upper=True)  # W (N, k, k)
    return torch.einsum("nai,nbj,nabx->nijx", inverse, inverse, second)


def _gauss_equation(second: torch.Tensor) -> torch.Tensor:
    """R_abcd = ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩ from II (N, k, k, d): (N, k, k, k, k)."""
    products = torch.einsum("nacx,nbdx->nabcd", second, second)  # ⟨II_ac, II_bd⟩
    return products - products.transpose(-1, -2)


def _scalar_from_frame(frame: torch.Tensor) -> torch.Tensor:
    """R = |H⃗|² − Σ_ij |II_ij|² in an orthonormal frame (H⃗ = Σ_i II_ii): (N,)."""
    mean_vector = torch.diagonal(frame, dim1=1, dim2=2).sum(dim=-1)  # (N, d)
    return (mean_vector**2).sum(dim=-1) - (frame**2).sum(dim=(1, 2, 3))


def _gaussian_from_frame(frame: torch.Tensor) -> torch.Tensor:
    """K = ⟨II_00, II_11⟩ − |II_01|² in an orthonormal frame of a surface: (N,)."""
    return (frame[:, 0, 0] * frame[:, 1, 1]).sum(dim=-1) - (frame[:, 0, 1] ** 2).sum(dim=-1)


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
    setup = _Setup(f, u, cov, dtype)
    tolerance = setup.tolerance if tol is None else float(tol)
    jacobian = _jacobians(f, setup.flat, chunk_size)
    finite = torch.isfinite(jacobian.reshape(jacobian.shape[0], -1)).all(dim=1)
    jacobian = setup.whiten(torch.where(finite[:, None, None], jacobian, 0.0))
    mask = finite & (_immersion_ratio(jacobian) >= tolerance)
    return mask.reshape(setup.leading_shape)


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
    setup = _Setup(f, u, cov, dtype)
    jacobian = _jacobians(f, setup.flat, chunk_size)  # (N, d, k)
    _check_finite(setup, jacobian)
    jacobian = setup.whiten(jacobian)
    _check_immersion(setup, jacobian)
    return setup.unflatten(jacobian.mT @ jacobian)  # (..., k, k)


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
    setup = _Setup(f, u, cov, dtype)
    jacobian, hessian = _checked_jets(setup, chunk_size)
    return setup.unflatten(_normal_part(jacobian, hessian))


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
    setup = _Setup(f, u, cov, dtype)
    jacobian, hessian = _checked_jets(setup, chunk_size)
    return setup.unflatten(_gauss_equation(_normal_part(jacobian, hessian)))


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
    setup = _Setup(f, u, cov, dtype)
    vectors = []
    for name, vector in (("X", X), ("Y", Y)):
        vector = torch.as_tensor(vector, dtype=setup.flat.dtype, device=setup.flat.device)
        try:
            vector = torch.broadcast_to(vector, (*setup.leading_shape, setup.k))
        except RuntimeError as error:
            raise ValueError(
                f"{name}: expected shape ({setup.k},) or broadcastable to "
                f"{(*setup.leading_shape, setup.k)}, got {tuple(vector.shape)}"
            ) from error
        if not torch.isfinite(vector).all():
            raise ValueError(f"{name}: must be finite (found NaN or inf)")
        vectors.append(vector.reshape(-1, setup.k))
    x, y = vectors  # (N, k) each
    jacobian, hessian = _checked_jets(setup, chunk_size)
    riemann = _gauss_equation(_normal_part(jacobian, hessian))  # (N, k, k, k, k)
    numerator = torch.einsum("nabcd,na,nb,nc,nd->n", riemann, x, y, x, y)
    tx, ty = torch.einsum("ndk,nk->nd", jacobian, x), torch.einsum("ndk,nk->nd", jacobian, y)
    xx, yy, xy = (tx * tx).sum(-1), (ty * ty).sum(-1), (tx * ty).sum(-1)
    area_squared = xx * yy - xy**2
    parallel = ~(area_squared > setup.tolerance**2 * xx * yy)
    if parallel.any():
        raise ValueError(
            f"X, Y: must span a plane (be linearly independent) at every point; they are "
            f"parallel or zero at {_indices(parallel, setup.leading_shape)}"
        )
    return setup.unflatten(numerator / area_squared)


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
    setup = _Setup(f, u, cov, dtype)
    jacobian, hessian = _checked_jets(setup, chunk_size)
    frame = _orthonormal_frame_form(jacobian, _normal_part(jacobian, hessian))
    return setup.unflatten(_scalar_from_frame(frame))


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
    setup = _Setup(f, u, cov, dtype)
    if setup.k != 2:
        raise ValueError(
            f"u: gaussian_curvature needs points of a surface, shape (..., 2), got k = {setup.k}; "
            "use sectional_curvature or scalar_curvature in higher dimensions"
        )
    jacobian, hessian = _checked_jets(setup, chunk_size)
    frame = _orthonormal_frame_form(jacobian, _normal_part(jacobian, hessian))
    return setup.unflatten(_gaussian_from_frame(frame))
