"""The Gauss-equation engine: curvature of a whitened immersion from its first two derivatives.

This is the numeric core shared by :mod:`curvlab.curvature` (derivatives by autodiff),
:mod:`curvlab.geometry.finite_differences` (derivatives by central differences) and
:mod:`curvlab.geometry.measures` (integrals of K).  Everything here works on a *flat batch* of N
points;
the user-facing functions, with shapes (..., k), live in :mod:`curvlab.curvature`.

What is here, in the order a computation runs::

    PointBatch(f, u, cov, dtype)      checked inputs: points (N, k), d, L with Σ = L Lᵀ
    jacobians / jets                  J (N, d, k), H (N, d, k, k) = ∂f, ∂²f (jacfwd under vmap)
    row_jets                          the same for a map acting row by row on a batch
    batch.whiten(J), batch.whiten(H)  J̃ = L⁻¹ J, H̃ = L⁻¹ H: g = J̃ᵀ J̃ = Jᵀ Σ⁻¹ J
    immersion_ratio / check_immersion σ_min(J̃)/σ_max(J̃) against IMMERSION_TOLERANCE
    normal_part(J, H)                 II_ab = (I − Q Qᵀ) H_ab, J = Q R   (N, k, k, d)
    gauss_equation(II)                R_abcd = ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩   (N, k, k, k, k)
    orthonormal_frame_form(J, II)     II in the frame e_i = ∂_a W_ai, J W = Q  (no g⁻¹)
    gaussian_from_frame / scalar_from_frame   K = ⟨II_00, II_11⟩ − |II_01|²,
                                      R = |H⃗|² − Σ_ij |II_ij|²  (H⃗ = Σ_i II_ii)
    surface_from_jets(J, H)           all of the above for precomputed jets of a surface with
                                      any leading batch shape (...): immersed, II, K, √det g

Conventions (those of :mod:`curvlab.symbolic`): index order H[n, i, a, b] = ∂_a ∂_b f^i;
R_abcd = g_ae Rᵉ_bcd = ⟨R(∂_c, ∂_d)∂_b, ∂_a⟩; a sphere of radius r has K = 1/r², R = k(k−1)/r².
Input checks (:func:`resolve_dtype`, :func:`as_points`, :func:`output_dimension`,
:func:`whitening_factor`) raise ValueError/TypeError naming the argument.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch.func import jacfwd, jvp, vmap

__all__ = [
    "IMMERSION_TOLERANCE",
    "Map",
    "PointBatch",
    "as_points",
    "check_finite",
    "check_immersion",
    "checked_jets",
    "describe_indices",
    "gauss_equation",
    "gaussian_from_frame",
    "immersion_ratio",
    "jacobians",
    "jets",
    "normal_part",
    "orthonormal_frame_form",
    "output_dimension",
    "resolve_dtype",
    "row_jets",
    "scalar_from_frame",
    "singular_values",
    "surface_from_jets",
    "whitening_factor",
]

IMMERSION_TOLERANCE: dict[torch.dtype, float] = {torch.float64: 1e-7, torch.float32: 1e-3}
"""Smallest σ_min(J)/σ_max(J) accepted as an immersion, per dtype (J whitened by Σ)."""

Map = Callable[[torch.Tensor], torch.Tensor]

# ---------------------------------------------------------------------------------------------
# input checking


def resolve_dtype(u, dtype) -> torch.dtype:
    """The computation dtype: ``dtype`` if given (float64 or float32), else u's, else float64."""
    if dtype is None:
        if isinstance(u, torch.Tensor) and u.dtype in IMMERSION_TOLERANCE:
            return u.dtype
        return torch.float64
    if dtype not in IMMERSION_TOLERANCE:
        raise TypeError(f"dtype: expected torch.float64 or torch.float32, got {dtype}")
    return dtype


def as_points(u, dtype) -> torch.Tensor:
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


def output_dimension(f: Map, point: torch.Tensor) -> int:
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


def whitening_factor(cov, d: int, like: torch.Tensor) -> torch.Tensor | None:
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


def describe_indices(flat: torch.Tensor, shape: torch.Size, limit: int = 10) -> str:
    """The multi-indices (into u's leading shape) of the True entries of a flat mask."""
    where = torch.nonzero(flat).flatten().cpu().numpy()
    if len(shape) == 0:
        return "the single point u"
    listed = [tuple(int(i) for i in np.unravel_index(n, tuple(shape))) for n in where[:limit]]
    more = f" and {len(where) - limit} more" if len(where) > limit else ""
    return f"indices {listed}{more}"


class PointBatch:
    """Checked inputs: flat points (N, k), leading shape, d, Cholesky factor of cov."""

    def __init__(self, f: Map, u, cov, dtype):
        dtype = resolve_dtype(u, dtype)
        points = as_points(u, dtype)
        self.f = f
        self.leading_shape = points.shape[:-1]
        self.k = points.shape[-1]
        self.flat = points.reshape(-1, self.k)  # (N, k)
        self.d = output_dimension(f, self.flat[0])
        self.factor = whitening_factor(cov, self.d, self.flat)
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
        """(N, ...) back to u's leading shape (..., ...)."""
        return tensor.reshape((*self.leading_shape, *tensor.shape[1:]))


# ---------------------------------------------------------------------------------------------
# derivatives and the Gauss equation (flat batches: N points)


def jacobians(f: Map, points: torch.Tensor, chunk_size=None) -> torch.Tensor:
    """J (N, d, k) of f at each of the points (N, k), forward mode under vmap."""
    return vmap(jacfwd(f), chunk_size=chunk_size)(points)  # (N, d, k)


def jets(f: Map, points: torch.Tensor, chunk_size=None) -> tuple[torch.Tensor, torch.Tensor]:
    """J (N, d, k) and H (N, d, k, k) with H[n, i, a, b] = ∂_a ∂_b f^i at points[n]."""

    def jacobian_twice(x):
        jacobian = jacfwd(f)(x)
        return jacobian, jacobian

    def jet(x):
        hessian, jacobian = jacfwd(jacobian_twice, has_aux=True)(x)
        return jacobian, hessian

    return vmap(jet, chunk_size=chunk_size)(points)


def row_jets(f_rows: Callable, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """J (N, d, k) and H (N, d, k, k), H[n, i, a, b] = ∂_a ∂_b f^i at points[n], of a map that
    acts row by row: ``f_rows`` takes points (M, k) and returns (M, d) whose row m depends on
    the point in row m alone (a network on a batch of independent inputs).  The same numbers as
    :func:`jets` of the one-point map, up to round-off, with no ``vmap`` over the points: a
    forward derivative along e_b (every row) of the forward derivatives along every e_a, both
    under ``vmap`` over the k directions, so that f itself is computed once, its first
    derivatives once per direction, and one call of ``f_rows`` on the N rows carries them all;
    H[a, b] for a ≤ b is ∂_b ∂_a f, and H[b, a] the same number.  On the study's trained
    classifiers it is faster than :func:`jets` for one member's points, the adaptive rule's
    calls (the timings: docs/decisions/0009-parallel-tests-and-faster-jets.md), and faster
    again than the k(k+1)/2 pairs of directions stacked on the rows, each with its own f
    (docs/decisions/0014-batched-adaptive-integration.md).  A
    map whose rows interact (batch statistics) has no such row jets: its result here would be
    wrong, not refused.
    """
    n, k = points.shape
    eye = torch.eye(k, dtype=points.dtype, device=points.device)
    directions = eye[:, None, :].expand(k, n, k)  # (k, N, k): e_a on every row

    def along(x):  # (k, N, d): J e_a for every a
        return vmap(lambda e: jvp(f_rows, (x,), (e,))[1])(directions)

    first, second = vmap(lambda e: jvp(along, (points,), (e,)))(directions)  # (k_b, k_a, N, d)
    jacobian = first[0].permute(1, 2, 0)  # (N, d, k): the value is the same for every e_b
    outer = [[max(a, b) for b in range(k)] for a in range(k)]
    inner = [[min(a, b) for b in range(k)] for a in range(k)]
    hessian = second[outer, inner].permute(2, 3, 0, 1)  # (N, d, k, k): ∂_max ∂_min f
    return jacobian, hessian


def check_finite(batch: PointBatch, *tensors: torch.Tensor) -> None:
    bad = torch.zeros(batch.flat.shape[0], dtype=torch.bool, device=batch.flat.device)
    for tensor in tensors:
        bad |= ~torch.isfinite(tensor.reshape(tensor.shape[0], -1)).all(dim=1)
    if bad.any():
        raise ValueError(
            f"f: its value or derivatives are not finite at {int(bad.sum())} point(s) of u, "
            f"at {describe_indices(bad, batch.leading_shape)}"
        )


def singular_values(jacobian: torch.Tensor) -> torch.Tensor:
    """σ(J), descending, of (whitened) Jacobians J (..., d, k): shape (..., min(d, k)).  The
    one place σ(J) is taken: the immersion test below and the figures that show where σ_max
    collapses read it from here."""
    return torch.linalg.svdvals(jacobian)


def immersion_ratio(jacobian: torch.Tensor) -> torch.Tensor:
    """σ_min(J)/σ_max(J) per point, 0 where J = 0."""
    singular = singular_values(jacobian)  # (N, k), descending
    largest = singular[:, 0]
    return torch.where(largest > 0, singular[:, -1] / largest.clamp_min(1e-300), 0.0)


def check_immersion(batch: PointBatch, jacobian: torch.Tensor) -> None:
    bad = ~(immersion_ratio(jacobian) >= batch.tolerance)
    if bad.any():
        raise ValueError(
            f"u: f is not an immersion at {int(bad.sum())} point(s) (σ_min/σ_max of the whitened "
            f"Jacobian below {batch.tolerance:g}), at "
            f"{describe_indices(bad, batch.leading_shape)}; "
            "curvature is undefined there (select points with immersion_mask)"
        )


def checked_jets(batch: PointBatch, chunk_size=None) -> tuple[torch.Tensor, torch.Tensor]:
    jacobian, hessian = jets(batch.f, batch.flat, chunk_size)
    check_finite(batch, jacobian, hessian)
    jacobian, hessian = batch.whiten(jacobian), batch.whiten(hessian)
    check_immersion(batch, jacobian)
    return jacobian, hessian


def normal_part(jacobian: torch.Tensor, hessian: torch.Tensor, q=None) -> torch.Tensor:
    """II (N, k, k, d): (I − Q Qᵀ) H with J = Q R, the component of H normal to the tangents
    (``q``: J's Q, when already known)."""
    q = torch.linalg.qr(jacobian)[0] if q is None else q  # (N, d, k)
    tangential = torch.einsum("ndk,ndab->nkab", q, hessian)  # (N, k, k, k)
    normal = hessian - torch.einsum("ndk,nkab->ndab", q, tangential)  # (N, d, k, k)
    return normal.permute(0, 2, 3, 1)  # (N, k, k, d)


def orthonormal_frame_form(jacobian: torch.Tensor, second: torch.Tensor, upper=None):
    """II in an orthonormal tangent frame e_i = ∂_a W_ai (J W = Q, W = R⁻¹): (N, k, k, d)
    (``upper``: J's R, when already known)."""
    upper = torch.linalg.qr(jacobian)[1] if upper is None else upper  # (N, k, k)
    eye = torch.eye(upper.shape[-1], dtype=upper.dtype, device=upper.device).expand_as(upper)
    inverse = torch.linalg.solve_triangular(upper, eye, upper=True)  # W (N, k, k)
    return torch.einsum("nai,nbj,nabx->nijx", inverse, inverse, second)


def gauss_equation(second: torch.Tensor) -> torch.Tensor:
    """R_abcd = ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩ from II (N, k, k, d): (N, k, k, k, k)."""
    products = torch.einsum("nacx,nbdx->nabcd", second, second)  # ⟨II_ac, II_bd⟩
    return products - products.transpose(-1, -2)


def scalar_from_frame(frame: torch.Tensor) -> torch.Tensor:
    """R = |H⃗|² − Σ_ij |II_ij|² in an orthonormal frame (H⃗ = Σ_i II_ii): (N,)."""
    mean_vector = torch.diagonal(frame, dim1=1, dim2=2).sum(dim=-1)  # (N, d)
    return (mean_vector**2).sum(dim=-1) - (frame**2).sum(dim=(1, 2, 3))


def gaussian_from_frame(frame: torch.Tensor) -> torch.Tensor:
    """K = ⟨II_00, II_11⟩ − |II_01|² in an orthonormal frame of a surface: (N,)."""
    return (frame[:, 0, 0] * frame[:, 1, 1]).sum(dim=-1) - (frame[:, 0, 1] ** 2).sum(dim=-1)


# ---------------------------------------------------------------------------------------------
# precomputed jets of surfaces, any leading batch shape


def surface_from_jets(
    jacobian: torch.Tensor, hessian: torch.Tensor, tolerance: float | None = None
) -> dict[str, torch.Tensor]:
    """The engine on precomputed (whitened) jets of surfaces, with any leading shape (...).

    ``jacobian`` J (..., d, 2), ``hessian`` H (..., d, 2, 2) (H[..., i, a, b] = ∂_a ∂_b f^i, as
    from :func:`jets` or a batched forward pass).  A point is ``immersed`` when its jets are
    finite and σ_min/σ_max of J is at least ``tolerance`` (default
    :data:`IMMERSION_TOLERANCE` of J's dtype).  Returns tensors of shape (...) (``second`` of
    shape (..., 2, 2, d)): ``immersed`` (bool), ``second`` II = :func:`normal_part`, ``K`` by
    :func:`gaussian_from_frame` and ``volume_element`` √det g; all three 0 where not immersed.

    >>> u = torch.zeros(3, 4, 2, dtype=torch.float64)  # a 3 × 4 batch of points of a sphere
    >>> J = torch.eye(3, 2, dtype=torch.float64).expand(3, 4, 3, 2)
    >>> H = torch.zeros(3, 4, 3, 2, 2, dtype=torch.float64)
    >>> H[..., 2, 0, 0] = H[..., 2, 1, 1] = -0.5  # z = −(x² + y²)/4 at 0: radius 2
    >>> out = surface_from_jets(J, H)
    >>> out["K"].shape, float(out["K"][0, 0]), bool(out["immersed"].all())
    (torch.Size([3, 4]), 0.25, True)
    """
    if jacobian.ndim < 2 or jacobian.shape[-1] != 2:
        raise ValueError(f"jacobian: expected shape (..., d, 2), got {tuple(jacobian.shape)}")
    leading, d = jacobian.shape[:-2], jacobian.shape[-2]
    if hessian.shape != (*leading, d, 2, 2):
        raise ValueError(
            f"hessian: expected shape {(*leading, d, 2, 2)} to match the jacobian, got "
            f"{tuple(hessian.shape)}"
        )
    if tolerance is None:
        tolerance = IMMERSION_TOLERANCE[resolve_dtype(jacobian, None)]
    flat_j, flat_h = jacobian.reshape(-1, d, 2), hessian.reshape(-1, d, 2, 2)
    finite = torch.isfinite(flat_j).flatten(1).all(1) & torch.isfinite(flat_h).flatten(1).all(1)
    flat_j = torch.where(finite[:, None, None], flat_j, 0.0)
    flat_h = torch.where(finite[:, None, None, None], flat_h, 0.0)
    immersed = finite & (immersion_ratio(flat_j) >= tolerance)
    # a stand-in tangent plane where J is degenerate, so that QR stays finite; masked below
    plane = torch.eye(d, 2, dtype=flat_j.dtype, device=flat_j.device)
    safe_j = torch.where(immersed[:, None, None], flat_j, plane)
    q, upper = torch.linalg.qr(safe_j)  # once, for the normal part and the frame
    second = normal_part(safe_j, flat_h, q)
    K = gaussian_from_frame(orthonormal_frame_form(safe_j, second, upper))
    volume = torch.sqrt(torch.linalg.det(safe_j.mT @ safe_j))
    zero = torch.zeros_like(K)
    return {
        "immersed": immersed.reshape(leading),
        "second": torch.where(immersed[:, None, None, None], second, 0.0).reshape(
            (*leading, 2, 2, d)
        ),
        "K": torch.where(immersed, K, zero).reshape(leading),
        "volume_element": torch.where(immersed, volume, zero).reshape(leading),
    }
