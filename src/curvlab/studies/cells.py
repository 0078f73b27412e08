"""One cell of the Part II study: all tasks × seeds of one (model, depth), trained at once.

:func:`measure_cell` (cached by the study driver: :func:`reproduction_cells`) builds every
member of a cell, trains them as one vectorised ensemble
(:func:`curvlab.models.ensemble.train_ensemble`, full-batch Adam, the ``nn.Module`` under
``vmap``), then measures each
member in float64: test accuracy and loss, ∫|K| dA over the data region, ρ₀ and ρ⊥ at test
points along random unit directions (:mod:`curvlab.measurement.sheets`).  The measures are
also taken at the start t₀ of the last window of epochs, from a snapshot of the weights, and
each run's convergence is judged by :func:`curvlab.models.convergence.converged`.
A run that did not converge is trained afresh with twice the epochs, up the ladder
:func:`~curvlab.models.convergence.budgets` from ``epochs``, ``retrain_doublings`` times
(:func:`train_until_converged`); the first converged budget is kept.
Seed s draws the task split and the initial weights.

A cell's configuration is one study configuration (:mod:`curvlab.studies.reproduce`)
with single ``model``, ``depth`` and ``device``; its result holds ``runs`` (rows of
:data:`RUN_COLUMNS`), the loss curves (each at :data:`CURVE_POINTS` + 1 evenly spaced epochs
of its own budget) and ``seconds``.
"""

from __future__ import annotations

import math

import torch

from curvlab.data.tasks import LINEAR_TASKS, make_task
from curvlab.measurement.adaptive_sheets import adaptive_sheet
from curvlab.measurement.domains import data_domain_grid
from curvlab.measurement.sheets import data_region_grid, direction_measures, sheet_from_jets
from curvlab.models.attention import build_classifier, parameter_count
from curvlab.models.convergence import budgets, converged, window_start
from curvlab.models.ensemble import (
    ensemble_jets,
    evaluate_ensemble,
    stack,
    train_ensemble,
)
from curvlab.models.training import resolve_device
from curvlab.studies.study import Cells

__all__ = [
    "CURVE_POINTS",
    "RUN_COLUMNS",
    "build_members",
    "cell_label",
    "measure_cell",
    "measure_members",
    "reproduction_cells",
    "resolve_device",  # re-exported from curvlab.models.training, the one definition
    "train_and_judge",
    "train_until_converged",
]

CURVE_POINTS = 40
"""Each loss curve is kept at epochs k·B/40, k = 0..40, of its budget B."""

RUN_COLUMNS: tuple[str, ...] = (
    "task",
    "boundary",
    "model",
    "depth",
    "seed",
    "d_model",
    "n_tokens",
    "n_train",
    "params",
    "epochs",
    "converged",
    "accuracy_spread",
    "measure_change",
    "plateau_change",
    "train_loss",
    "train_accuracy",
    "test_loss",
    "test_accuracy",
    "curvature_total_abs",
    "curvature_total",
    "sheet_area",
    "non_immersed_nodes",
    "rho",
    "rho_normal",
    "log_curvature_total_abs",
    "log_rho",
    "log_rho_normal",
    "curvature_total_abs_fine",
    "curvature_capped",
    "curvature_capped_fine",
    "log_curvature_capped",
    "curvature_adaptive",
    "curvature_adaptive_check",
    "adaptive_error",
    "adaptive_evaluations",
    "adaptive_converged",
    "log_curvature_adaptive",
)
"""The columns of ``runs.csv``: converged by the criterion of
:mod:`curvlab.models.convergence` (with its accuracy spread and largest log change over the
window), plateau_change the loss's relative drop over the window (recorded, not used),
curvature_total_abs = ∫|K| dA over the data domain at the config's ``resolution``, rho = ρ₀,
rho_normal = ρ⊥ (:mod:`curvlab.measurement.sheets`), and their natural logs;
curvature_total_abs_fine = the same integral at ``resolution_check`` (the quadrature's
convergence on this very sheet; None when the config has no ``resolution_check``);
curvature_capped (and _fine) = ∫ min(|K|, 1/m) dA on the same grids
(:func:`~curvlab.measurement.sheets.sheet_from_jets`); curvature_adaptive = ∫|K| dA on the same
domain by the adaptive rule from an ``adaptive_resolution``² grid to ``adaptive_tolerance``
(:func:`~curvlab.measurement.adaptive_sheets.adaptive_sheet`), with its error estimate, its
number of evaluations and whether the estimate met the tolerance, and curvature_adaptive_check
the same rule from an ``adaptive_resolution_check``² grid on the runs checked; None for the
models not in ``adaptive_models``, at the window's start, and without
``adaptive_resolution``."""


_TRAINED = RUN_COLUMNS[RUN_COLUMNS.index("params") : RUN_COLUMNS.index("test_accuracy") + 1]


def _log(value):
    return math.log(value) if value is not None and value > 0 else None


def build_members(config: dict, model: str, depth: int, members) -> tuple:
    """The stacked ensemble of ``members`` [(task, seed)] and their data tensors on device:
    (ensemble, params, train_x, train_y, test_x, test_y)."""
    device = config["device"]
    widths = {k: config[k] for k in ("d_model", "n_heads", "n_tokens", "residual", "norm")}
    models = [
        build_classifier(model, depth=depth, seed=s, pooling=config["pooling"], **widths)
        for _, s in members
    ]
    data = [
        make_task(
            t, n_train=config["n_train"], n_test=config["n_test"], seed=s, noise=config["noise"]
        )
        for t, s in members
    ]
    tensors = [
        torch.stack([getattr(d, name) for d in data]).float().to(device)
        for name in ("train_points", "train_labels", "test_points", "test_labels")
    ]
    return (stack(models).to(device=device), parameter_count(models[0]), *tensors)


def quadrature_grid(train_x: torch.Tensor, config: dict, resolution: int) -> tuple:
    """The nodes and weights of ∫|K| dA for a config: with ``domain_radius`` None (the
    exploratory study), :func:`~curvlab.measurement.sheets.data_region_grid` (nodes within 1.5 cells
    of a training point: the domain shrinks as the grid is refined); with a radius r,
    :func:`~curvlab.measurement.domains.data_domain_grid` (the points within r of a training point:
    one domain at every resolution)."""
    radius = config.get("domain_radius")
    if radius is None:
        return data_region_grid(train_x, resolution)
    return data_domain_grid(train_x, resolution, radius)


def _curvature_total_abs(sheet: dict, e: int) -> float | None:
    return float(sheet["curvature_total_abs"][e]) if int(sheet["nodes"][e]) else None


def _capped(sheet: dict, e: int) -> float | None:
    return float(sheet["curvature_capped"][e]) if int(sheet["nodes"][e]) else None


def adaptive_members(
    ens, train_x, config: dict, members, resolution: int, *, batched: bool = True
) -> dict[int, dict]:
    """∫|K| dA of the members ``members`` (indices) on the config's data domain by the adaptive
    rule from a ``resolution``² grid to ``adaptive_tolerance``: per member its integral, error
    estimate, evaluations and convergence flag.  All members in one call of
    :func:`~curvlab.measurement.adaptive_sheets.adaptive_sheet`, each refined by its own error
    estimate and leaving the batch once it has converged, so that a member's numbers are those
    it has alone and the batch costs what its members cost; ``batched=False`` integrates them
    one at a time (the same numbers: the adaptive benchmark's comparison)."""
    members = list(members)
    out: dict[int, dict] = {}
    for group in [members] if batched and members else [[e] for e in members]:
        result = adaptive_sheet(
            ens.select(group),
            train_x[group],
            config["domain_radius"],
            resolution=resolution,
            tolerance=config["adaptive_tolerance"],
        )
        for j, e in enumerate(group):
            out[e] = {
                "curvature_total_abs": float(result["curvature_total_abs"][j]),
                "error": float(result["error"][j]),
                "evaluations": int(result["evaluations"][j]),
                "converged": bool(result["converged"][j]),
            }
    return out


def measure_members(
    ens, train_x, test_x, config: dict, *, check=(), final=False, batched=True
) -> list[dict]:
    """Per member: ∫|K| dA (None without immersed nodes), ∫K dA, the sheet's area, non-immersed
    nodes, the capped integral, ρ₀ and ρ⊥, all in float64 (the ensemble is not modified); for
    the members whose indices are in ``check``, when the config has a ``resolution_check``, also
    ∫|K| dA and the capped integral at that grid (``*_fine``, else None).  With ``final`` (the
    trained sheet, not the window's start), a config with an ``adaptive_resolution`` and a model
    in its ``adaptive_models``: the adaptive ∫|K| dA (:func:`adaptive_members`, ``batched``),
    and on the members in ``check`` the same from ``adaptive_resolution_check``."""
    ens = ens.with_params({k: v.double() for k, v in ens.params.items()})
    ens.buffers = {k: v.double() for k, v in ens.buffers.items()}
    nodes, weights = quadrature_grid(train_x.double(), config, config["resolution"])
    J, H = ensemble_jets(ens, nodes)
    sheet = sheet_from_jets(J, H, weights)
    check = sorted(set(check)) if config.get("resolution_check") else []
    fine: dict[int, float | None] = {}
    capped_fine: dict[int, float | None] = {}
    if check:
        fine_grid = quadrature_grid(train_x.double()[check], config, config["resolution_check"])
        sheet_fine = sheet_from_jets(*ensemble_jets(ens.select(check), fine_grid[0]), fine_grid[1])
        fine = {e: _curvature_total_abs(sheet_fine, j) for j, e in enumerate(check)}
        capped_fine = {e: _capped(sheet_fine, j) for j, e in enumerate(check)}
    adaptive: dict[int, dict] = {}
    adaptive_check: dict[int, dict] = {}
    if final and config.get("adaptive_resolution") and config["model"] in config["adaptive_models"]:
        points = train_x.double()
        adaptive = adaptive_members(
            ens, points, config, range(ens.size), config["adaptive_resolution"], batched=batched
        )
        check_resolution = config["adaptive_resolution_check"]
        adaptive_check = adaptive_members(
            ens, points, config, check, check_resolution, batched=batched
        )
    points = test_x.double()[:, : config["rho_points"]]
    generator = torch.Generator().manual_seed(0)
    shape = (*points.shape[:2], config["rho_directions"], 2)  # (E, N, directions, 2)
    # one set of directions for every member, so that a member's ρ does not depend on its
    # place in the ensemble (the retraining ladder trains subsets)
    directions = torch.randn(*shape[1:], generator=generator, dtype=torch.float64)
    directions = directions.expand(*shape).to(points.device)
    directions = directions / directions.norm(dim=-1, keepdim=True)
    J, H = ensemble_jets(ens, points)
    rho = direction_measures(J, H, directions)
    out = []
    for e in range(ens.size):
        curvature_total_abs = _curvature_total_abs(sheet, e)
        out.append(
            {
                "curvature_total_abs": curvature_total_abs,
                "curvature_total": (
                    float(sheet["curvature_total"][e]) if curvature_total_abs is not None else None
                ),
                "sheet_area": float(sheet["sheet_area"][e]),
                "non_immersed_nodes": int(sheet["non_immersed"][e]),
                "rho": float(rho["rho_mean"][e]),
                "rho_normal": float(rho["rho_normal_mean"][e]),
                "curvature_total_abs_fine": fine.get(e),
                "curvature_capped": _capped(sheet, e),
                "curvature_capped_fine": capped_fine.get(e),
                "curvature_adaptive": adaptive.get(e, {}).get("curvature_total_abs"),
                "curvature_adaptive_check": adaptive_check.get(e, {}).get("curvature_total_abs"),
                "adaptive_error": adaptive.get(e, {}).get("error"),
                "adaptive_evaluations": adaptive.get(e, {}).get("evaluations"),
                "adaptive_converged": adaptive.get(e, {}).get("converged"),
            }
        )
    return out


def train_and_judge(config: dict, model: str, depth: int, members, epochs: int) -> dict:
    """Train the ensemble of ``members`` ((task, seed) pairs) of one (model, depth) for
    ``epochs`` by the config's schedule, measure it at the start of the convergence window and
    at the end, and judge each member by :func:`~curvlab.models.convergence.converged`.

    Returns ``params`` (per member), ``fitted`` (:func:`train_ensemble`'s output), ``tested``
    (test loss and accuracy), ``measured`` (per member, at the end) and ``judged`` (per member:
    converged, accuracy spread, measure change or None when not finite).
    """
    ens, params, train_x, train_y, test_x, test_y = build_members(config, model, depth, members)
    t0 = window_start(epochs)
    fitted = train_ensemble(
        ens,
        train_x,
        train_y,
        epochs=epochs,
        learning_rate=config["learning_rate"],
        weight_decay=config["weight_decay"],
        schedule=config["schedule"],
        snapshots=[t0],
    )
    tested = evaluate_ensemble(ens, test_x, test_y)
    stride = config.get("check_seed_stride") or 1
    check = [e for e, (_, seed) in enumerate(members) if seed % stride == 0]
    final = measure_members(ens, train_x, test_x, config, check=check, final=True)
    start = measure_members(ens.with_params(fitted["snapshots"][t0]), train_x, test_x, config)
    accuracy = torch.cat([fitted["accuracy_curve"][:, t0:], fitted["train_accuracy"][:, None]], 1)
    judged = []
    for e in range(len(members)):
        ok, spread, change = converged(accuracy[e].tolist(), start[e], final[e])
        judged.append((ok, spread, change if math.isfinite(change) else None))
    return {
        "params": params,
        "fitted": fitted,
        "tested": tested,
        "measured": final,
        "judged": judged,
    }


def _curve(loss_curve, budget: int) -> tuple[list[int], list[float]]:
    epochs = sorted(
        {min(budget - 1, round(k * budget / CURVE_POINTS)) for k in range(CURVE_POINTS + 1)}
    )
    return epochs, [float(loss_curve[e]) for e in epochs]


def train_until_converged(config: dict, model: str, depth: int, members) -> tuple[list, float]:
    """Train every member of ``members`` ((task, seed) pairs) of one (model, depth) at the first
    budget of the ladder ``budgets(config["epochs"], config["retrain_doublings"])``, then train the
    members that did not converge afresh at the next budget, and so on; each member keeps the
    first budget at which it converged (or the last one).  Members of an ensemble do not
    interact, so a member's result does not depend on which others share its rung.

    Returns (per member a dict: ``epochs``, ``converged``, ``accuracy_spread``,
    ``measure_change``, ``plateau_change``, train/test loss and accuracy, ``params``, the
    measures of :func:`measure_members`, the loss curve ``curve_epochs``/``curve``, and
    ``first_rung``, the same dict at the first budget (the fixed-budget rule's result; the
    member's own dict when it stopped there); the training seconds).
    """
    results: list = [None] * len(members)
    first: list = [None] * len(members)
    remaining = list(range(len(members)))
    seconds = 0.0
    for budget in budgets(config["epochs"], config["retrain_doublings"]):
        trained = train_and_judge(config, model, depth, [members[i] for i in remaining], budget)
        fitted, tested = trained["fitted"], trained["tested"]
        seconds += fitted["seconds"]
        for j, i in enumerate(remaining):
            ok, spread, change = trained["judged"][j]
            curve_epochs, curve = _curve(fitted["loss_curve"][j], budget)
            results[i] = {
                "params": trained["params"],
                "epochs": budget,
                "converged": ok,
                "accuracy_spread": spread,
                "measure_change": change,
                "plateau_change": fitted["plateau_change"][j],
                "train_loss": float(fitted["train_loss"][j]),
                "train_accuracy": float(fitted["train_accuracy"][j]),
                "test_loss": float(tested["loss"][j]),
                "test_accuracy": float(tested["accuracy"][j]),
                "measured": trained["measured"][j],
                "curve_epochs": curve_epochs,
                "curve": curve,
            }
            if first[i] is None:
                first[i] = results[i]
        remaining = [i for i in remaining if not results[i]["converged"]]
        if not remaining:
            break
    return [{**r, "first_rung": f} for r, f in zip(results, first, strict=True)], seconds


def _row(config: dict, task: str, seed: int, result: dict) -> dict:
    measured = result["measured"]
    row = {
        "task": task,
        "boundary": "linear" if task in LINEAR_TASKS else "nonlinear",
        "model": config["model"],
        "depth": config["depth"],
        "seed": seed,
        "d_model": config["d_model"],
        "n_tokens": config["n_tokens"],
        "n_train": config["n_train"],
        **{k: result[k] for k in _TRAINED},
        **measured,
        "log_curvature_total_abs": _log(measured["curvature_total_abs"]),
        "log_rho": _log(measured["rho"]),
        "log_rho_normal": _log(measured["rho_normal"]),
        "log_curvature_capped": _log(measured["curvature_capped"]),
        "log_curvature_adaptive": _log(measured["curvature_adaptive"]),
    }
    return {k: row[k] for k in RUN_COLUMNS}


def measure_cell(config: dict) -> dict:
    """Train and measure one (model, depth) cell (a study config with single ``model``,
    ``depth`` and ``device``): all tasks × seeds as one ensemble.  ``runs`` (each member at the
    first budget at which it converged, or the last: the retraining ladder), ``first_rung``
    (each member at the config's ``epochs``: the fixed-budget rule), ``curves`` (of ``runs``)
    and ``seconds``."""
    members = [(t, s) for t in config["tasks"] for s in config["seeds"]]
    results, seconds = train_until_converged(config, config["model"], config["depth"], members)
    runs, first_rung, curves = [], [], []
    for (task, seed), result in zip(members, results, strict=True):
        runs.append(_row(config, task, seed, result))
        first_rung.append(_row(config, task, seed, result["first_rung"]))
        curves.append({"epochs": result["curve_epochs"], "losses": result["curve"]})
    return {"runs": runs, "first_rung": first_rung, "curves": curves, "seconds": seconds}


def cell_label(config: dict) -> str:
    """The progress bar's label of a cell: its model, depth and number of seeds."""
    return f"{config['model']} depth {config['depth']}, {len(config['seeds'])} seeds"


def reproduction_cells(configs) -> Cells:
    """The batch of (model, depth) cells ``configs`` (:func:`measure_cell`), cached under the
    name ``reproduce``: the reproduction's, the sweep's and the drawn models' cells, read from
    one cache."""
    return Cells("reproduce", measure_cell, configs, label=cell_label)
