"""Finite-difference proxies for curvature: cheap, derivative-free, and only approximately right.

Two estimators, both needing only evaluations of the map ``f`` (one point (k,) -> (d,)):

- :func:`finite_difference_jet` / :func:`finite_difference_gaussian_curvature` /
  :func:`finite_difference_scalar_curvature`: the same Gauss-equation curvature as
  :mod:`curvlab.curvature`, with J and H replaced by central differences of step h::

      ∂_a f  ≈ [f(u + h e_a) − f(u − h e_a)] / 2h
      ∂_a² f ≈ [f(u + h e_a) − 2 f(u) + f(u − h e_a)] / h²
      ∂_a∂_b f ≈ [f(u + h e_a + h e_b) − f(u + h e_a − h e_b)
                  − f(u − h e_a + h e_b) + f(u − h e_a − h e_b)] / 4h²

  The truncation error is O(h²) and the round-off error O(ε/h²) (ε the unit round-off, the
  h² in the denominator of the second differences), so the total error is smallest near
  h ≈ ε^{1/4} (about 1e-4 in float64, for a map and points of unit scale) and is then about
  ε^{1/2} ≈ 1e-8 relative, not the 1e-15 of autodiff.

- :func:`second_difference_ratio`, along a unit direction w:
  ρ = ‖f(u + h w) − 2 f(u) + f(u − h w)‖ / ‖f(u + h w) − f(u − h w)‖.  A proxy for local
  nonlinearity, not a curvature: it is 0 for affine maps and invariant to rescaling f, and
  ρ ≈ (h/2) ‖γ''‖/‖γ'‖ for the curve γ(t) = f(u + t w).  It includes the tangential part of
  γ'' (a reparametrisation effect) and is not intrinsic.

All computations are in float64 by default (``dtype``), batched over the leading shape of ``u``
with ``torch.func.vmap``; ``cov`` whitens exactly as in :mod:`curvlab.curvature`.
"""

from __future__ import annotations

import torch
from torch.func import vmap

from curvlab.geometry.gauss_equation import (
    PointBatch,
    check_finite,
    check_immersion,
    describe_indices,
    gaussian_from_frame,
    normal_part,
    orthonormal_frame_form,
    scalar_from_frame,
)

__all__ = [
    "finite_difference_gaussian_curvature",
    "finite_difference_jet",
    "finite_difference_scalar_curvature",
    "second_difference_ratio",
]


def _check_step(step) -> float:
    try:
        step = float(step)
    except (TypeError, ValueError) as error:
        raise TypeError(f"step: expected a positive number, got {step!r}") from error
    if not step > 0 or step == float("inf"):
        raise ValueError(f"step: expected a positive finite number, got {step}")
    return step


def _central_differences(f, x: torch.Tensor, step: float):
    """J (d, k) and H (d, k, k) at one point x by the central-difference stencils above."""
    k = x.shape[0]
    eye = torch.eye(k, dtype=x.dtype, device=x.device) * step  # h e_a as rows
    centre = f(x)  # (d,)
    forward = torch.stack([f(x + eye[a]) for a in range(k)], dim=-1)  # (d, k)
    backward = torch.stack([f(x - eye[a]) for a in range(k)], dim=-1)  # (d, k)
    jacobian = (forward - backward) / (2 * step)
    columns = []
    for a in range(k):
        row = []
        for b in range(k):
            if a == b:
                row.append((forward[:, a] - 2 * centre + backward[:, a]) / step**2)
            else:
                plus_plus = f(x + eye[a] + eye[b])
                plus_minus = f(x + eye[a] - eye[b])
                minus_plus = f(x - eye[a] + eye[b])
                minus_minus = f(x - eye[a] - eye[b])
                mixed = plus_plus - plus_minus - minus_plus + minus_minus
                row.append(mixed / (4 * step**2))
        columns.append(torch.stack(row, dim=-1))
    hessian = torch.stack(columns, dim=-2)  # (d, k, k)
    return jacobian, hessian


def _difference_jets(batch: PointBatch, step: float, chunk_size):
    jacobian, hessian = vmap(
        lambda x: _central_differences(batch.f, x, step), chunk_size=chunk_size
    )(batch.flat)
    check_finite(batch, jacobian, hessian)
    jacobian, hessian = batch.whiten(jacobian), batch.whiten(hessian)
    check_immersion(batch, jacobian)
    return jacobian, hessian


def finite_difference_jet(f, u, step=1e-4, *, dtype=torch.float64, chunk_size=None):
    """Central-difference estimates of J (..., d, k) and H (..., d, k, k) of f at u.

    ``step`` is h in the stencils of the module docstring, in the units of u; H[..., i, a, b]
    estimates ∂_a∂_b f^i, as the autodiff Hessian of :mod:`curvlab.curvature` is laid out.

    >>> import torch
    >>> J, H = finite_difference_jet(lambda x: torch.stack([x[0] * x[1], x[0] ** 2]), torch.ones(2))
    >>> torch.allclose(H[1], torch.tensor([[2.0, 0.0], [0.0, 0.0]], dtype=torch.float64))
    True
    """
    batch = PointBatch(f, u, None, dtype)
    step = _check_step(step)
    jacobian, hessian = vmap(lambda x: _central_differences(f, x, step), chunk_size=chunk_size)(
        batch.flat
    )
    check_finite(batch, jacobian, hessian)
    return batch.unflatten(jacobian), batch.unflatten(hessian)


def finite_difference_gaussian_curvature(
    f, u, step=1e-4, cov=None, *, dtype=torch.float64, chunk_size=None
):
    """Gaussian curvature of a surface (k == 2) from finite-difference J and H, shape (...).

    The Gauss equation of :func:`curvlab.curvature.gaussian_curvature`, with the derivatives
    from central differences of step ``step``: error O(h²) + O(ε/h²).

    >>> import torch
    >>> saddle = lambda x: torch.stack([x[0], x[1], x[0] * x[1]])
    >>> K = finite_difference_gaussian_curvature(saddle, torch.tensor([0.5, -0.4]))
    >>> abs(float(K) - (-1 / (1 + 0.25 + 0.16) ** 2)) < 1e-6
    True
    """
    batch = PointBatch(f, u, cov, dtype)
    if batch.k != 2:
        raise ValueError(f"u: needs points of a surface, shape (..., 2), got k = {batch.k}")
    jacobian, hessian = _difference_jets(batch, _check_step(step), chunk_size)
    frame = orthonormal_frame_form(jacobian, normal_part(jacobian, hessian))
    return batch.unflatten(gaussian_from_frame(frame))


def finite_difference_scalar_curvature(
    f, u, step=1e-4, cov=None, *, dtype=torch.float64, chunk_size=None
):
    """Scalar curvature R from finite-difference J and H, shape (...); R = 2K on a surface.

    >>> import torch, math
    >>> sphere = lambda x: torch.stack([torch.sin(x[0]) * torch.cos(x[1]),
    ...                                 torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])])
    >>> R = finite_difference_scalar_curvature(sphere, torch.tensor([1.0, 0.5]))
    >>> math.isclose(float(R), 2.0, rel_tol=1e-6)
    True
    """
    batch = PointBatch(f, u, cov, dtype)
    jacobian, hessian = _difference_jets(batch, _check_step(step), chunk_size)
    frame = orthonormal_frame_form(jacobian, normal_part(jacobian, hessian))
    return batch.unflatten(scalar_from_frame(frame))


def second_difference_ratio(f, u, direction, step=1e-2, *, dtype=torch.float64, chunk_size=None):
    """The second-difference ratio ρ along ``direction`` at every point, shape (...).

    ρ = ‖f(u + h w) − 2 f(u) + f(u − h w)‖ / ‖f(u + h w) − f(u − h w)‖, w = direction/‖direction‖
    (shape (k,) or broadcastable to u's (..., k)), h = ``step``.  A nonlinearity proxy (our
    reading of a third-party description; not known to be the paper's formula): 0 for affine f,
    invariant under f ↦ c f, ≈ (h/2)‖γ''‖/‖γ'‖ for γ(t) = f(u + t w), so ρ/h is the quantity
    comparable across steps.  Raises ValueError where f(u + h w) = f(u − h w).

    >>> import torch
    >>> parabola = lambda x: torch.stack([x[0], x[0] ** 2])
    >>> rho = second_difference_ratio(parabola, torch.tensor([0.0]), torch.tensor([1.0]), step=0.1)
    >>> round(float(rho), 12)  # ‖(0, 2h²)‖ / ‖(2h, 0)‖ = h
    0.1
    """
    batch = PointBatch(f, u, None, dtype)
    h = _check_step(step)
    w = torch.as_tensor(direction, dtype=batch.flat.dtype, device=batch.flat.device)
    try:
        w = torch.broadcast_to(w, (*batch.leading_shape, batch.k)).reshape(-1, batch.k)
    except RuntimeError as error:
        raise ValueError(
            f"direction: expected shape ({batch.k},) or broadcastable to "
            f"{(*batch.leading_shape, batch.k)}, got {tuple(w.shape)}"
        ) from error
    norms = torch.linalg.vector_norm(w, dim=-1, keepdim=True)
    if not (torch.isfinite(norms) & (norms > 0)).all():
        raise ValueError("direction: must be finite and nonzero at every point")
    w = w / norms

    def ratio_terms(x, v):
        plus, centre, minus = f(x + h * v), f(x), f(x - h * v)
        second = torch.linalg.vector_norm(plus - 2 * centre + minus)
        first = torch.linalg.vector_norm(plus - minus)
        return second, first

    second, first = vmap(ratio_terms, chunk_size=chunk_size)(batch.flat, w)
    bad = ~(first > 0) | ~torch.isfinite(second)
    if bad.any():
        raise ValueError(
            "f: f(u + h w) = f(u - h w) or a value is not finite, so the ratio is undefined at "
            f"{describe_indices(bad, batch.leading_shape)}"
        )
    return batch.unflatten(second / first)
