"""Closed-form test surfaces shared by the torch-side tests (maps of one point (k,) -> (d,))."""

import torch


def sphere(radius):
    """Round 2-sphere of ``radius`` in polar angle ``x[0]`` and azimuth ``x[1]``: K = 1/r²."""

    def f(x):
        theta, phi = x[0], x[1]
        return radius * torch.stack(
            [torch.sin(theta) * torch.cos(phi), torch.sin(theta) * torch.sin(phi), torch.cos(theta)]
        )

    return f


def three_sphere(radius):
    """Round 3-sphere of ``radius`` in ℝ⁴ (hyperspherical angles): scalar curvature 6/r²."""

    def f(x):
        s0, s1 = torch.sin(x[0]), torch.sin(x[1])
        return radius * torch.stack(
            [
                torch.cos(x[0]),
                s0 * torch.cos(x[1]),
                s0 * s1 * torch.cos(x[2]),
                s0 * s1 * torch.sin(x[2]),
            ]
        )

    return f


def torus(big, small):
    """Torus of radii ``big`` > ``small``: K = cos v / (small (big + small cos v))."""

    def f(x):
        ring = big + small * torch.cos(x[1])
        return torch.stack(
            [ring * torch.cos(x[0]), ring * torch.sin(x[0]), small * torch.sin(x[1])]
        )

    return f


def saddle(x):
    """Hyperbolic paraboloid z = xy: K = −1/(1 + x² + y²)²."""
    return torch.stack([x[0], x[1], x[0] * x[1]])
