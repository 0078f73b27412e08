"""Speed of curvlab.curvature against the per-point loop a user would otherwise write.

Run ``python -m curvlab.studies.engine_benchmark`` (``make bench``): for four maps,
ℝ² → ℝ⁶⁴ and ℝ³ → ℝ⁶⁴, each a small MLP (tanh then GELU) and a gated softmax attention
layer, it computes the scalar curvature R at ``points`` random inputs in two ways, in the same run:

- curvlab: :func:`curvlab.curvature.scalar_curvature`, one call, ``torch.func`` (jacfwd of
  jacfwd) under ``vmap``, QR-based normal projection;
- the loop: a Python loop over points, J and H from ``torch.autograd.functional.jacobian``
  (H as the Jacobian of the Jacobian, ``create_graph=True``, default arguments), then the same
  Gauss equation with g⁻¹ = ``torch.linalg.inv(JᵀJ)``.

Then :func:`gallery_accuracy` checks the same function against the exact scalar curvature of
every closed-form surface of :mod:`curvlab.geometry.surfaces` (a second, small table).

A third column times the middle way, a Python loop over points with ``torch.func.jacfwd``
(forward mode, no ``vmap``), to show where the speed comes from.

The loop costs a large fraction of a second per point, so by default it is timed on the first
``loop_points`` (20) of the points only; the table reports the cost per point of each and
their ratio, and says on how many points each was timed.  The results are compared on the
points the loops computed (maximum absolute and relative difference).  Timings are wall-clock
on whatever CPU runs this, with ``torch.get_num_threads()`` threads, and vary with load.
"""

from __future__ import annotations

import argparse
import functools
import math
import time
from collections.abc import Callable

import torch
from torch.autograd.functional import jacobian

from curvlab import arguments
from curvlab.geometry.curvature import scalar_curvature
from curvlab.geometry.surfaces import gallery
from curvlab.models.attention import gated_attention_point_map

__all__ = [
    "benchmark_maps",
    "format_accuracy",
    "format_table",
    "gallery_accuracy",
    "jacfwd_loop_scalar_curvature",
    "loop_scalar_curvature",
    "main",
    "run_benchmark",
]

OUTPUT_DIMENSION = 64


def _mlp(k: int, generator: torch.Generator, width: int = 64) -> Callable:
    """x ↦ W₃ GELU(W₂ tanh(W₁ x + b₁) + b₂) + b₃, ℝᵏ → ℝ⁶⁴, fixed random weights."""

    def init(rows, cols):
        return torch.randn(rows, cols, generator=generator, dtype=torch.float64) / math.sqrt(cols)

    w1, w2, w3 = init(width, k), init(width, width), init(OUTPUT_DIMENSION, width)
    b1 = 0.1 * torch.randn(width, generator=generator, dtype=torch.float64)
    b2 = 0.1 * torch.randn(width, generator=generator, dtype=torch.float64)
    b3 = 0.1 * torch.randn(OUTPUT_DIMENSION, generator=generator, dtype=torch.float64)

    def mlp(x):  # (k,) -> (64,)
        hidden = torch.tanh(w1 @ x + b1)  # (width,)
        hidden = torch.nn.functional.gelu(w2 @ hidden + b2)  # (width,)
        return w3 @ hidden + b3  # (64,)

    return mlp


def _gated_attention(k: int, generator: torch.Generator, tokens: int = 16) -> Callable:
    """One gated softmax-attention read-out of a k-dimensional input x, ℝᵏ → ℝ⁶⁴.

    q = W_q x, α = softmax(4 K q / √64) over ``tokens`` fixed keys K, y = σ(W_g x + b_g) ⊙ Σ α_i v_i
    (the gate after the attention, before the output projection W_o), out = W_o y.
    """
    dim = OUTPUT_DIMENSION

    def init(rows, cols):
        return torch.randn(rows, cols, generator=generator, dtype=torch.float64) / math.sqrt(cols)

    w_query, w_gate = init(dim, k), init(dim, k)
    keys, values, w_out = init(tokens, dim), init(tokens, dim), init(dim, dim)
    b_gate = torch.randn(dim, generator=generator, dtype=torch.float64)
    return functools.partial(
        gated_attention_point_map,
        keys=keys,
        values=values,
        query_weight=w_query,
        gate="elementwise",
        gate_weight=w_gate,
        gate_bias=b_gate,
        output_weight=w_out,
        beta=4.0 / math.sqrt(dim),
    )


def benchmark_maps(seed: int = 0) -> dict[str, tuple[int, Callable]]:
    """The benchmark's maps, name -> (k, f), each f: ℝᵏ → ℝ⁶⁴ with fixed seeded weights."""
    generator = torch.Generator().manual_seed(seed)
    maps = {}
    for k in (2, 3):
        maps[f"MLP tanh/GELU, R^{k} -> R^64"] = (k, _mlp(k, generator))
        maps[f"gated attention, R^{k} -> R^64"] = (k, _gated_attention(k, generator))
    return maps


def loop_scalar_curvature(f: Callable, points: torch.Tensor) -> torch.Tensor:
    """The plain alternative: a Python loop, torch.autograd.functional, g⁻¹ by inversion.

    R = gᵃᶜ gᵇᵈ R_abcd with R_abcd = ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩, II = (I − J g⁻¹ Jᵀ) H.

    >>> import torch
    >>> saddle = lambda x: torch.stack([x[0], x[1], x[0] * x[1]])
    >>> loop_scalar_curvature(saddle, torch.zeros(1, 2, dtype=torch.float64))
    tensor([-2.], dtype=torch.float64)
    """
    values = []
    for x in points:
        J = jacobian(f, x)  # (d, k)
        H = jacobian(lambda y: jacobian(f, y, create_graph=True), x)  # (d, k, k)
        values.append(_scalar_from_derivatives(J, H))
    return torch.stack(values)


def jacfwd_loop_scalar_curvature(f: Callable, points: torch.Tensor) -> torch.Tensor:
    """The middle way: a Python loop over points, J and H by ``torch.func.jacfwd``, no vmap.

    >>> import torch
    >>> saddle = lambda x: torch.stack([x[0], x[1], x[0] * x[1]])
    >>> jacfwd_loop_scalar_curvature(saddle, torch.zeros(1, 2, dtype=torch.float64))
    tensor([-2.], dtype=torch.float64)
    """
    values = []
    for x in points:
        J = torch.func.jacfwd(f)(x)  # (d, k)
        H = torch.func.jacfwd(torch.func.jacfwd(f))(x)  # (d, k, k)
        values.append(_scalar_from_derivatives(J, H))
    return torch.stack(values)


def _scalar_from_derivatives(J: torch.Tensor, H: torch.Tensor) -> torch.Tensor:
    """R at one point from J (d, k) and H (d, k, k), by g⁻¹ = inv(JᵀJ), as a user would write."""
    g_inv = torch.linalg.inv(J.T @ J)  # (k, k)
    projection = torch.eye(J.shape[0], dtype=J.dtype) - J @ g_inv @ J.T  # (d, d)
    second = torch.einsum("ij,jab->abi", projection, H)  # (k, k, d)
    riemann = torch.einsum("aci,bdi->abcd", second, second)
    riemann = riemann - torch.einsum("adi,bci->abcd", second, second)
    return torch.einsum("ac,bd,abcd->", g_inv, g_inv, riemann)


def _best_of(repeats: int, compute: Callable, *args) -> tuple[torch.Tensor, float]:
    """(result, least wall time) of ``repeats`` calls ``compute(*args)``: the least is the one
    that other work on a shared machine disturbed least (the convention of Python's ``timeit``)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = compute(*args)
        times.append(time.perf_counter() - start)
    return result, min(times)


def run_benchmark(
    points: int = 10_000, loop_points: int | None = 20, seed: int = 0, maps=None, repeats: int = 3
) -> list[dict]:
    """Time curvlab and the loop on every benchmark map; a list of records (dicts), one per map.

    ``loop_points`` (≤ ``points``; None for all) is how many of the points the loops are timed
    on; ``maps`` a subset of the names of :func:`benchmark_maps` (None for all).  Each record:
    map, k, d, points, curvlab_s (total), curvlab_ms_per_point, loop_points, loop_s (total, on
    its subset), loop_ms_per_point, speedup (ratio of per-point costs),
    jacfwd_loop_ms_per_point and jacfwd_loop_speedup (the torch.func loop, same subset),
    max_abs_diff and max_rel_diff (curvlab against the loop, on the loop's points), threads,
    device.  Every time is the least of ``repeats`` runs, each after an untimed warm-up.

    >>> records = run_benchmark(points=4, loop_points=1, maps=["MLP tanh/GELU, R^2 -> R^64"])
    >>> len(records), records[0]["max_rel_diff"] < 1e-8
    (1, True)
    """
    if not isinstance(points, int) or points < 1:
        raise ValueError(f"points: expected a positive integer, got {points!r}")
    loop_points = points if loop_points is None else loop_points
    if not isinstance(loop_points, int) or not 1 <= loop_points <= points:
        raise ValueError(f"loop_points: expected an integer in [1, points], got {loop_points!r}")
    arguments.integer("repeats", repeats, 1, expected="a positive integer")
    available = benchmark_maps(seed)
    names = list(available) if maps is None else list(maps)
    unknown = [name for name in names if name not in available]
    if unknown or not names:
        raise ValueError(f"maps: expected names among {list(available)}, got {names}")
    generator = torch.Generator().manual_seed(seed + 1)
    records = []
    for name in names:
        k, f = available[name]
        u = 2 * torch.rand(points, k, generator=generator, dtype=torch.float64) - 1  # (N, k)
        scalar_curvature(f, u[:2])  # warm-ups
        loop_scalar_curvature(f, u[:1])
        jacfwd_loop_scalar_curvature(f, u[:1])
        fast, curvlab_s = _best_of(repeats, scalar_curvature, f, u)  # (N,)
        slow, loop_s = _best_of(repeats, loop_scalar_curvature, f, u[:loop_points])
        middle, jacfwd_s = _best_of(repeats, jacfwd_loop_scalar_curvature, f, u[:loop_points])
        jacfwd_per_point = jacfwd_s / loop_points
        if not torch.allclose(middle, slow, rtol=1e-8, atol=1e-10):
            raise RuntimeError(f"{name}: the two loops disagree; the benchmark maps are broken")
        difference = (fast[:loop_points] - slow).abs()
        curvlab_per_point, loop_per_point = curvlab_s / points, loop_s / loop_points
        records.append(
            {
                "map": name,
                "k": k,
                "d": OUTPUT_DIMENSION,
                "points": points,
                "curvlab_s": curvlab_s,
                "curvlab_ms_per_point": 1e3 * curvlab_per_point,
                "loop_points": loop_points,
                "loop_s": loop_s,
                "loop_ms_per_point": 1e3 * loop_per_point,
                "speedup": loop_per_point / curvlab_per_point,
                "jacfwd_loop_ms_per_point": 1e3 * jacfwd_per_point,
                "jacfwd_loop_speedup": jacfwd_per_point / curvlab_per_point,
                "max_abs_diff": float(difference.max()),
                "max_rel_diff": float((difference / slow.abs().clamp_min(1e-300)).max()),
                "threads": torch.get_num_threads(),
                "device": str(u.device),
            }
        )
    return records


def format_table(records) -> str:
    """The records as a fixed-width text table (what ``make bench`` prints)."""
    header = (
        f"{'map':<31} {'curvlab: points':>15} {'s':>8} {'ms/pt':>8} "
        f"{'loop: points':>12} {'s':>8} {'ms/pt':>8} {'speedup':>8} {'max |diff|':>10} "
        f"{'jacfwd loop ms/pt':>17} {'speedup':>8}"
    )
    lines = [header, "-" * len(header)]
    for r in records:
        lines.append(
            f"{r['map']:<31} {r['points']:>15} {r['curvlab_s']:>8.3f} "
            f"{r['curvlab_ms_per_point']:>8.4f} {r['loop_points']:>12} {r['loop_s']:>8.2f} "
            f"{r['loop_ms_per_point']:>8.3f} {r['speedup']:>7.0f}x {r['max_abs_diff']:>10.1e} "
            f"{r['jacfwd_loop_ms_per_point']:>17.3f} {r['jacfwd_loop_speedup']:>7.0f}x"
        )
    subset = any(r["loop_points"] < r["points"] for r in records)
    notes = [
        f"scalar curvature, float64, {records[0]['device']}, {records[0]['threads']} thread(s); "
        "speedup = ratio of per-point costs; loop = torch.autograd.functional.jacobian per point; "
        "jacfwd loop = torch.func.jacfwd per point, no vmap",
    ]
    if subset:
        notes.append(
            "the loop was timed on the first 'loop: points' of the points only (its cost is per "
            "point, so the ratio compares ms/pt); differences are over those points"
        )
    return "\n".join(lines + notes)


def gallery_accuracy(points: int = 1000, seed: int = 0) -> list[dict]:
    """curvlab's scalar curvature against the exact one on every surface of
    :mod:`curvlab.geometry.surfaces`.

    ``points`` seeded random points strictly inside each surface's patch (10% margin); a
    record per surface: name, k, points, max_abs_error, max_rel_error (relative to max |R|,
    or absolute where R ≡ 0), seconds.

    >>> records = gallery_accuracy(points=8)
    >>> all(r["max_abs_error"] < 1e-10 for r in records)
    True
    """
    arguments.integer("points", points, 1, expected="a positive integer")
    generator = torch.Generator().manual_seed(seed)
    records = []
    for surface in gallery():
        low = torch.tensor([a for a, _ in surface.patch], dtype=torch.float64)
        high = torch.tensor([b for _, b in surface.patch], dtype=torch.float64)
        unit = torch.rand(points, surface.dimension, generator=generator, dtype=torch.float64)
        u = low + (high - low) * (0.1 + 0.8 * unit)
        start = time.perf_counter()
        computed = scalar_curvature(surface, u)
        seconds = time.perf_counter() - start
        exact = surface.scalar_curvature(u)
        error = float((computed - exact).abs().max())
        scale = float(exact.abs().max())
        records.append(
            {
                "surface": surface.name,
                "k": surface.dimension,
                "points": points,
                "max_abs_error": error,
                "max_rel_error": error / scale if scale > 0 else error,
                "seconds": seconds,
            }
        )
    return records


def format_accuracy(records) -> str:
    """The :func:`gallery_accuracy` records as a text table."""
    header = f"{'surface':<18} {'k':>2} {'points':>7} {'max |R - R_exact|':>18} {'relative':>9}"
    lines = [header, "-" * len(header)]
    for r in records:
        lines.append(
            f"{r['surface']:<18} {r['k']:>2} {r['points']:>7} {r['max_abs_error']:>18.1e} "
            f"{r['max_rel_error']:>9.1e}"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    """Command line: ``python -m curvlab.studies.engine_benchmark [--points N]
    [--loop-points M] [--seed S] [--gallery-points G]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10_000, help="points for curvlab")
    parser.add_argument(
        "--loop-points", type=int, default=20, help="points the loops are timed on (0: all)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--gallery-points", type=int, default=1000, help="points per closed-form surface"
    )
    args = parser.parse_args(argv)
    loop_points = None if args.loop_points == 0 else min(args.loop_points, args.points)
    records = run_benchmark(args.points, loop_points, args.seed)
    print(format_table(records))
    print()
    print(format_accuracy(gallery_accuracy(args.gallery_points, args.seed)))


if __name__ == "__main__":
    main()
