"""A gallery of closed-form surfaces, each with its exact curvature, to test and teach against.

Every entry is a :class:`Surface`: a map ``f`` of one point (k,) -> (d,), in the convention of
:mod:`curvlab.curvature` (a ``Surface`` is itself callable, so it can be passed as ``f``), its
exact Gaussian curvature ``K(u)`` (k = 2) and scalar curvature ``R(u)`` as functions of a tensor
of points (..., k) -> (...), and a ``patch``, one (low, high) pair per coordinate, on which f is
an immersion (and, for the closed surfaces, which covers the surface once)::

    plane()                 (u, v, 0)                                   K = 0
    sphere(r)               r (sin θ cos φ, sin θ sin φ, cos θ)          K = 1/r²
    cylinder(r)             (r cos φ, r sin φ, z)                        K = 0 (looks curved)
    saddle()                (x, y, xy)                                   K = −1/(1 + x² + y²)²
    paraboloid()            (x, y, (x² + y²)/2)                          K = 1/(1 + x² + y²)²
    monkey_saddle()         (x, y, x³ − 3xy²)                 K = −36ρ²/(1 + 9ρ⁴)², ρ² = x² + y²
    torus(R, r)             ((R + r cos v) cos u, (R + r cos v) sin u, r sin v)
                                                            K = cos v / (r (R + r cos v))
    catenoid(c)             (c cosh(v/c) cos u, c cosh(v/c) sin u, v)    K = −1/(c² cosh⁴(v/c))
    enneper()               (u − u³/3 + uv², v − v³/3 + u²v, u² − v²)    K = −4/(1 + u² + v²)⁴
    three_sphere(r)         the round 3-sphere of radius r in ℝ⁴ (k = 3)  R = 6/r²

The formulas are classical (do Carmo, *Differential Geometry of Curves and Surfaces*, §3.3 and
§3.5); the tests check each one against :func:`curvlab.curvature.gaussian_curvature`.  Scalar
curvature of a surface is R = 2K.  :func:`gallery` lists one instance of each.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from curvlab import arguments

__all__ = [
    "Surface",
    "catenoid",
    "cylinder",
    "enneper",
    "gallery",
    "monkey_saddle",
    "paraboloid",
    "plane",
    "saddle",
    "sphere",
    "three_sphere",
    "torus",
]

PI = math.pi


@dataclass(frozen=True)
class Surface:
    """A closed-form immersion with its exact curvature.

    ``f``: one point (k,) -> (d,); ``gaussian_curvature``: points (..., 2) -> exact K (...),
    None when k != 2; ``scalar_curvature``: points (..., k) -> exact R (...); ``patch``: k
    (low, high) pairs where f is an immersion.  Calling the surface calls ``f``.
    """

    name: str
    f: Callable[[torch.Tensor], torch.Tensor]
    scalar_curvature: Callable[[torch.Tensor], torch.Tensor]
    gaussian_curvature: Callable[[torch.Tensor], torch.Tensor] | None
    patch: tuple[tuple[float, float], ...]

    @property
    def dimension(self) -> int:
        """k, the number of coordinates."""
        return len(self.patch)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.f(x)


def _surface(name, f, K, patch) -> Surface:
    return Surface(name, f, lambda u: 2 * K(u), K, tuple(patch))


def _constant(value: float) -> Callable[[torch.Tensor], torch.Tensor]:
    def curvature(u: torch.Tensor) -> torch.Tensor:
        u = torch.as_tensor(u)
        return torch.full(u.shape[:-1], value, dtype=u.dtype, device=u.device)

    return curvature


def plane() -> Surface:
    """The plane (u, v, 0) in ℝ³: K = 0."""

    def f(x):
        return torch.stack([x[0], x[1], 0 * x[0]])

    return _surface("plane", f, _constant(0.0), [(-1.0, 1.0), (-1.0, 1.0)])


def sphere(radius: float = 1.0) -> Surface:
    """Round sphere of ``radius``, polar angle ``x[0]`` ∈ (0, π), azimuth ``x[1]``: K = 1/r²."""
    r = arguments.positive("radius", radius, type_error=True)

    def f(x):
        theta, phi = x[0], x[1]
        return r * torch.stack(
            [torch.sin(theta) * torch.cos(phi), torch.sin(theta) * torch.sin(phi), torch.cos(theta)]
        )

    return _surface(f"sphere(r={r:g})", f, _constant(1 / r**2), [(0.0, PI), (0.0, 2 * PI)])


def cylinder(radius: float = 1.0) -> Surface:
    """Circular cylinder (r cos φ, r sin φ, z): extrinsically bent, intrinsically flat, K = 0."""
    r = arguments.positive("radius", radius, type_error=True)

    def f(x):
        return torch.stack([r * torch.cos(x[0]), r * torch.sin(x[0]), x[1]])

    return _surface(f"cylinder(r={r:g})", f, _constant(0.0), [(0.0, 2 * PI), (-1.0, 1.0)])


def saddle() -> Surface:
    """Hyperbolic paraboloid z = xy: K = −1/(1 + x² + y²)²."""

    def f(x):
        return torch.stack([x[0], x[1], x[0] * x[1]])

    def K(u):
        return -1 / (1 + u[..., 0] ** 2 + u[..., 1] ** 2) ** 2

    return _surface("saddle", f, K, [(-1.0, 1.0), (-1.0, 1.0)])


def paraboloid() -> Surface:
    """Elliptic paraboloid z = (x² + y²)/2: K = 1/(1 + x² + y²)²."""

    def f(x):
        return torch.stack([x[0], x[1], (x[0] ** 2 + x[1] ** 2) / 2])

    def K(u):
        return 1 / (1 + u[..., 0] ** 2 + u[..., 1] ** 2) ** 2

    return _surface("paraboloid", f, K, [(-1.0, 1.0), (-1.0, 1.0)])


def monkey_saddle() -> Surface:
    """Monkey saddle z = x³ − 3xy²: K = −36ρ²/(1 + 9ρ⁴)², ρ² = x² + y² (K = 0 at the origin)."""

    def f(x):
        return torch.stack([x[0], x[1], x[0] ** 3 - 3 * x[0] * x[1] ** 2])

    def K(u):
        rho2 = u[..., 0] ** 2 + u[..., 1] ** 2
        return -36 * rho2 / (1 + 9 * rho2**2) ** 2

    return _surface("monkey saddle", f, K, [(-1.0, 1.0), (-1.0, 1.0)])


def torus(big: float = 2.0, small: float = 1.0) -> Surface:
    """Torus of radii ``big`` > ``small`` > 0, angles (u, v): K = cos v / (r (R + r cos v)).

    Over the whole torus ∫K dA = 0 (Gauss–Bonnet, χ = 0), ∫|K| dA = 8π, A = 4π²Rr.
    """
    R = arguments.positive("big", big, type_error=True)
    r = arguments.positive("small", small, type_error=True)
    if not R > r:
        raise ValueError(f"big, small: expected big > small for an embedded torus, got {R}, {r}")

    def f(x):
        ring = R + r * torch.cos(x[1])
        return torch.stack([ring * torch.cos(x[0]), ring * torch.sin(x[0]), r * torch.sin(x[1])])

    def K(u):
        cos_v = torch.cos(u[..., 1])
        return cos_v / (r * (R + r * cos_v))

    return _surface(f"torus(R={R:g}, r={r:g})", f, K, [(0.0, 2 * PI), (0.0, 2 * PI)])


def catenoid(scale: float = 1.0) -> Surface:
    """Catenoid (c cosh(v/c) cos u, c cosh(v/c) sin u, v), minimal: K = −1/(c² cosh⁴(v/c))."""
    c = arguments.positive("scale", scale, type_error=True)

    def f(x):
        radius = c * torch.cosh(x[1] / c)
        return torch.stack([radius * torch.cos(x[0]), radius * torch.sin(x[0]), x[1]])

    def K(u):
        return -1 / (c**2 * torch.cosh(u[..., 1] / c) ** 4)

    return _surface(f"catenoid(c={c:g})", f, K, [(0.0, 2 * PI), (-1.0, 1.0)])


def enneper() -> Surface:
    """Enneper's minimal surface: K = −4/(1 + u² + v²)⁴ (conformal, dA = (1 + u² + v²)² du dv)."""

    def f(x):
        u, v = x[0], x[1]
        return torch.stack([u - u**3 / 3 + u * v**2, v - v**3 / 3 + u**2 * v, u**2 - v**2])

    def K(u):
        return -4 / (1 + u[..., 0] ** 2 + u[..., 1] ** 2) ** 4

    return _surface("enneper", f, K, [(-1.0, 1.0), (-1.0, 1.0)])


def three_sphere(radius: float = 1.0) -> Surface:
    """Round 3-sphere of ``radius`` in ℝ⁴ (hyperspherical angles): R = 6/r², each K(X, Y) = 1/r²."""
    r = arguments.positive("radius", radius, type_error=True)

    def f(x):
        s0, s1 = torch.sin(x[0]), torch.sin(x[1])
        return r * torch.stack(
            [
                torch.cos(x[0]),
                s0 * torch.cos(x[1]),
                s0 * s1 * torch.cos(x[2]),
                s0 * s1 * torch.sin(x[2]),
            ]
        )

    return Surface(
        f"three_sphere(r={r:g})",
        f,
        _constant(6 / r**2),
        None,
        ((0.0, PI), (0.0, PI), (0.0, 2 * PI)),
    )


def gallery() -> list[Surface]:
    """One instance of every surface above (default parameters), in the order listed."""
    return [
        plane(),
        sphere(),
        cylinder(),
        saddle(),
        paraboloid(),
        monkey_saddle(),
        torus(),
        catenoid(),
        enneper(),
        three_sphere(),
    ]
