"""The Part II reproduction: train every model of the study, measure it, test the claims.

``reproduce(scale="small", out=DIR)`` (also ``python -m curvlab reproduce``) writes

- ``DIR/runs.csv``  one row per trained model (:data:`RUN_COLUMNS`);
- ``DIR/loss_curves.csv``  task, model, depth, seed, epoch, loss (every :data:`CURVE_STRIDE`-th
  epoch and the last);
- ``DIR/effects.csv``  per task and comparison: the paired difference over seeds with its 95%
  interval (unadjusted; the forest plot);
- ``DIR/correlations.json``  E3: Pearson and Spearman, pooled and within task, with intervals;
- ``DIR/claims.json``  one record per empirical claim (:data:`CLAIM_FIELDS`, plus ``d_z``,
  ``p_raw`` and the comparison), verdicts by the rules of :mod:`curvlab.stats`;
- ``DIR/meta.json``  the configuration, the analysis plan, code version, timings;
- figures ``DIR/forest.png``, ``DIR/loss_curves.png``, ``DIR/curvature_accuracy.png``.

Protocol.  One cell = one (model variant, depth): all tasks × seeds of it train as one
vectorised ensemble (:mod:`curvlab.experiments.ensemble`), full-batch Adam for a fixed number
of epochs, the plateau criterion recorded per run; seed s draws the task split and the
initial weights.  Each cell is cached on disk under its configuration and the source of the
code it runs.  The protocol and :data:`ANALYSIS` (measures, tests, margin, level) were fixed
from convergence and the ungated baseline's accuracy before any gated–ungated difference was
looked at.

Analysis.  The seed is the independent unit: for a claim over a set of tasks, each seed
contributes the mean over those tasks of the matched difference (model − baseline), on the
log scale for curvature (∫|K| dA and ρ are heavy-tailed and positive).  Directional claims use
the paired t interval, p Holm-adjusted over all claims; "no advantage on linear tasks" uses
TOST against the margin of :data:`ANALYSIS` (its ``ci_low``/``ci_high`` are then the 90% TOST
interval and ``p`` the TOST p).  Runs that did not converge stay in the analysis and are
counted in each claim's ``unconverged_runs``.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from curvlab import stats
from curvlab.attention import VARIANTS, build_classifier, parameter_count
from curvlab.experiments import write_csv
from curvlab.experiments.cache import cached, code_version
from curvlab.experiments.config import study_config
from curvlab.experiments.ensemble import (
    ensemble_jets,
    evaluate_ensemble,
    stack,
    train_ensemble,
)
from curvlab.experiments.measures import data_region_grid, direction_measures, sheet_from_jets
from curvlab.tasks import HARD_TASKS, LINEAR_TASKS, NONLINEAR_TASKS, TASKS, make_task

__all__ = [
    "ANALYSIS",
    "CLAIM_FIELDS",
    "CODE_MODULES",
    "RUN_COLUMNS",
    "SCALES",
    "analyse",
    "claims",
    "correlations",
    "per_task_effects",
    "reproduce",
    "reproduce_config",
    "run_cell",
    "run_study",
]

CODE_MODULES: tuple[str, ...] = (
    "curvlab.attention",
    "curvlab.tasks",
    "curvlab.training",
    "curvlab.experiments.ensemble",
    "curvlab.experiments.measures",
    "curvlab.experiments.reproduce",
)
"""The modules a cached cell depends on: editing any of them recomputes it."""

CURVE_STRIDE = 10

_BASE = {
    "d_model": 4,
    "n_heads": 1,
    "n_tokens": 2,
    "residual": True,
    "norm": False,
    "pooling": "mean",
    "n_train": 128,
    "n_test": 256,
    "noise": 0.05,
    "epochs": 400,
    "learning_rate": 0.05,
    "weight_decay": 0.0,
    "grid": 10,
    "rho_points": 64,
    "rho_directions": 4,
    "tasks": list(TASKS),
    "models": list(VARIANTS),
    "depths": [1],
    "seeds": list(range(20)),
}

SCALES: dict[str, dict] = {
    "small": dict(_BASE),
    "medium": {
        **_BASE,
        "d_model": 16,
        "n_heads": 2,
        "n_tokens": 4,
        "n_train": 512,
        "n_test": 1024,
        "epochs": 1000,
        "learning_rate": 0.02,
        "grid": 16,
        "depths": [1, 2],
        "seeds": list(range(30)),
    },
    "large": {
        **_BASE,
        "d_model": 32,
        "n_heads": 4,
        "n_tokens": 8,
        "n_train": 1024,
        "n_test": 2048,
        "epochs": 2000,
        "learning_rate": 0.01,
        "grid": 20,
        "depths": [1, 2, 4],
        "seeds": list(range(50)),
    },
}
"""Study sizes: one run's settings plus the swept lists (tasks, models, depths, seeds)."""

_SWEPT = ("tasks", "models", "depths", "seeds")
_CHECKS = {"tasks": TASKS, "models": VARIANTS, "depths": 1, "seeds": 0, "grid": 2, "epochs": 1}

ANALYSIS: dict = {
    "alpha": 0.05,
    "accuracy_margin": 0.01,
    "gated": "gated_elementwise",
    "baseline": "ungated",
    "correlation_measure": "log_curvature_total_abs",
    "paper_r": 0.79,
}
"""The analysis plan, fixed before the differences were seen: level, equivalence margin (±1
accuracy point), the gated model and baseline of the headline claims, the curvature measure
correlated with accuracy in E3, and the r = 0.79 a secondary source attributes to the paper
(unverified)."""

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
    "plateau_change",
    "train_loss",
    "train_accuracy",
    "test_loss",
    "test_accuracy",
    "curvature_total_abs",
    "curvature_total",
    "area",
    "non_immersed_nodes",
    "rho",
    "rho_normal",
    "log_curvature_total_abs",
    "log_rho",
    "log_rho_normal",
)
"""The columns of ``runs.csv``: curvature_total_abs = ∫|K| dA over the data region, rho = ρ₀,
rho_normal = ρ_⊥ (:mod:`curvlab.experiments.measures`), and their natural logs."""

CLAIM_FIELDS: tuple[str, ...] = (
    "claim",
    "statement",
    "measure",
    "effect",
    "ci_low",
    "ci_high",
    "p",
    "n_seeds",
    "mde_80",
    "margin",
    "verdict",
)
"""The fields every record of ``claims.json`` has (more may follow)."""


def reproduce_config(scale: str = "small", **overrides) -> dict:
    """The study configuration of ``scale`` with ``overrides`` (unknown keys rejected).

    >>> c = reproduce_config("small", seeds=[0, 1])
    >>> c["seeds"], c["depths"], len(c["tasks"])
    ([0, 1], [1], 8)
    """
    return study_config(SCALES, scale, overrides, _CHECKS, study="reproduction")


def _resolve_device(device) -> str:
    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device: expected 'auto', 'cpu' or 'cuda', got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: 'cuda' requested but no CUDA device is available")
    return device


def _log(value):
    return math.log(value) if value is not None and value > 0 else None


def _cell(cell_config: dict) -> dict:
    """Train and measure one (model, depth) cell: all tasks × seeds as one ensemble."""
    device = cell_config["device"]
    model, depth = cell_config["model"], cell_config["depth"]
    members = [(t, s) for t in cell_config["tasks"] for s in cell_config["seeds"]]
    widths = {k: cell_config[k] for k in ("d_model", "n_heads", "n_tokens", "residual", "norm")}
    models = [
        build_classifier(model, depth=depth, seed=s, pooling=cell_config["pooling"], **widths)
        for _, s in members
    ]
    params = parameter_count(models[0])
    data = [
        make_task(
            t,
            n_train=cell_config["n_train"],
            n_test=cell_config["n_test"],
            seed=s,
            noise=cell_config["noise"],
        )
        for t, s in members
    ]
    train_x = torch.stack([d.train_points for d in data]).float().to(device)
    train_y = torch.stack([d.train_labels for d in data]).float().to(device)
    test_x = torch.stack([d.test_points for d in data]).float().to(device)
    test_y = torch.stack([d.test_labels for d in data]).float().to(device)
    ens = stack(models).to(device=device)
    fitted = train_ensemble(
        ens,
        train_x,
        train_y,
        epochs=cell_config["epochs"],
        learning_rate=cell_config["learning_rate"],
        weight_decay=cell_config["weight_decay"],
    )
    tested = evaluate_ensemble(ens, test_x, test_y)
    # curvature in float64: the sheet over the data region, rho at test points
    ens.to(dtype=torch.float64)
    nodes, weights = data_region_grid(train_x.double(), cell_config["grid"])
    J, H = ensemble_jets(ens, nodes)
    sheet = sheet_from_jets(J, H, weights)
    points = test_x.double()[:, : cell_config["rho_points"]]
    generator = torch.Generator().manual_seed(0)
    directions = torch.randn(
        *points.shape[:2],
        cell_config["rho_directions"],
        2,
        generator=generator,
        dtype=torch.float64,
    ).to(device)
    directions = directions / directions.norm(dim=-1, keepdim=True)
    J, H = ensemble_jets(ens, points)
    rho = direction_measures(J, H, directions)
    curve = fitted["loss_curve"]
    keep = sorted({*range(0, curve.shape[1], CURVE_STRIDE), curve.shape[1] - 1})
    runs, curves = [], []
    for e, (task, seed) in enumerate(members):
        total_abs = float(sheet["total_abs"][e]) if int(sheet["nodes"][e]) else None
        runs.append(
            {
                "task": task,
                "boundary": "linear" if task in LINEAR_TASKS else "nonlinear",
                "model": model,
                "depth": depth,
                "seed": seed,
                "d_model": cell_config["d_model"],
                "n_tokens": cell_config["n_tokens"],
                "n_train": cell_config["n_train"],
                "params": params,
                "epochs": cell_config["epochs"],
                "converged": fitted["converged"][e],
                "plateau_change": fitted["plateau_change"][e],
                "train_loss": float(fitted["train_loss"][e]),
                "train_accuracy": float(fitted["train_accuracy"][e]),
                "test_loss": float(tested["loss"][e]),
                "test_accuracy": float(tested["accuracy"][e]),
                "curvature_total_abs": total_abs,
                "curvature_total": float(sheet["total"][e]) if total_abs is not None else None,
                "area": float(sheet["area"][e]),
                "non_immersed_nodes": int(sheet["non_immersed"][e]),
                "rho": float(rho["rho_mean"][e]),
                "rho_normal": float(rho["rho_normal_mean"][e]),
                "log_curvature_total_abs": _log(total_abs),
                "log_rho": _log(float(rho["rho_mean"][e])),
                "log_rho_normal": _log(float(rho["rho_normal_mean"][e])),
            }
        )
        curves.append([float(curve[e, i]) for i in keep])
    return {"runs": runs, "curve_epochs": keep, "curves": curves, "seconds": fitted["seconds"]}


def run_cell(cell_config: dict, *, directory=None, refresh: bool = False) -> dict:
    """One cached cell (a study config with single ``model``, ``depth`` and ``device``)."""
    return cached(
        _cell,
        cell_config,
        name="reproduce",
        modules=CODE_MODULES,
        directory=directory,
        refresh=refresh,
    )


def run_study(
    scale: str = "small",
    *,
    device="auto",
    directory=None,
    refresh: bool = False,
    progress: bool = True,
    **overrides,
) -> tuple[list[dict], list[dict]]:
    """Train (or read from the cache) every cell: (runs, loss-curve rows)."""
    config = reproduce_config(scale, **overrides)
    device = _resolve_device(device)
    cells = [(m, d) for d in config["depths"] for m in config["models"]]
    base = {k: v for k, v in config.items() if k not in ("models", "depths")}
    runs, curve_rows = [], []
    bar = tqdm(cells, desc="reproduce", disable=not progress, unit="cell")
    for model, depth in bar:
        bar.set_postfix_str(f"{model} depth {depth}")
        result = run_cell(
            {**base, "model": model, "depth": depth, "device": device},
            directory=directory,
            refresh=refresh,
        )
        runs.extend(result["runs"])
        for run, curve in zip(result["runs"], result["curves"], strict=True):
            for epoch, loss in zip(result["curve_epochs"], curve, strict=True):
                curve_rows.append(
                    {k: run[k] for k in ("task", "model", "depth", "seed")}
                    | {"epoch": epoch, "loss": loss}
                )
    return runs, curve_rows


# ---------------------------------------------------------------------------------------------
# analysis


def _index(runs: Iterable[dict], measure: str) -> dict:
    return {
        (r["task"], r["depth"], r["seed"], r["model"]): r[measure]
        for r in runs
        if r.get(measure) is not None
    }


def _per_seed(runs, measure, model, baseline, tasks, depth) -> tuple[list, list, list]:
    """Per-seed means over ``tasks`` of model and baseline values, seeds with all present."""
    index = _index(runs, measure)
    seeds = sorted({r["seed"] for r in runs})
    a, b, used = [], [], []
    for seed in seeds:
        keys = [(t, depth, seed) for t in tasks]
        if all((*k, model) in index and (*k, baseline) in index for k in keys):
            a.append(sum(index[(*k, model)] for k in keys) / len(keys))
            b.append(sum(index[(*k, baseline)] for k in keys) / len(keys))
            used.append(seed)
    return a, b, used


_CLAIMS = (
    # claim, statement, measure, model, baseline, tasks, kind
    (
        "E1-sheet",
        "gated representations are more curved than ungated (∫|K| dA over the data)",
        "log_curvature_total_abs",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E1-proxy",
        "gated representations are more curved than ungated (proxy ρ, h → 0)",
        "log_rho",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E1-extrinsic",
        "gated representations bend more than ungated (normal part ρ⊥)",
        "log_rho_normal",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2",
        "gated attention is more accurate than ungated on nonlinear boundaries",
        "test_accuracy",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-linear",
        "gated attention has no accuracy advantage on linear boundaries",
        "test_accuracy",
        "gated",
        "baseline",
        LINEAR_TASKS,
        "equivalent",
    ),
    (
        "E2-width",
        "the gate beats an ungated model of matched parameters (wider attention)",
        "test_accuracy",
        "gated",
        "ungated_wide",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-additive",
        "the multiplicative gate beats the additive nonlinearity Y + tanh(Z)",
        "test_accuracy",
        "gated",
        "ablation",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-headwise",
        "a headwise gate is also more accurate than ungated on nonlinear tasks",
        "test_accuracy",
        "gated_headwise",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-hard",
        "gated attention is more accurate than ungated on the hard tasks",
        "test_accuracy",
        "gated",
        "baseline",
        HARD_TASKS,
        "greater",
    ),
)


def _resolve(name: str, plan: dict) -> str:
    return plan[name] if name in ("gated", "baseline") else name


def _unconverged(runs, models, tasks, depth) -> int:
    return sum(
        1
        for r in runs
        if r["model"] in models
        and r["task"] in tasks
        and r["depth"] == depth
        and not r["converged"]
    )


def _correlation_mde(n_eff: int, alpha: float) -> float | None:
    if n_eff <= 3:
        return None
    from scipy.stats import norm

    return math.tanh((norm.ppf(1 - alpha / 2) + norm.ppf(0.8)) / math.sqrt(n_eff - 3))


def correlations(runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS) -> dict:
    """E3: Pearson and Spearman of (log ∫|K| dA, test accuracy) over runs on nonlinear tasks,
    pooled and within task (task means removed), with 95% intervals."""
    rows = [
        r
        for r in runs
        if r["task"] in NONLINEAR_TASKS
        and r["depth"] == depth
        and r.get(plan["correlation_measure"]) is not None
    ]
    x = [r[plan["correlation_measure"]] for r in rows]
    y = [r["test_accuracy"] for r in rows]
    groups = [r["task"] for r in rows]
    return {
        "measure": plan["correlation_measure"],
        "depth": depth,
        "pooled": stats.correlation(x, y, alpha=plan["alpha"]),
        "within_task": stats.correlation(x, y, groups=groups, alpha=plan["alpha"]),
        "paper_r": plan["paper_r"],
        "paper_r_source": "secondary source, unverified",
    }


def claims(runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS) -> list[dict]:
    """The claim records (:data:`CLAIM_FIELDS`), Holm-adjusted over the family."""
    alpha = plan["alpha"]
    present = {r["task"] for r in runs}
    records = []
    for name, statement, measure, model, baseline, tasks, kind in _CLAIMS:
        model, baseline = _resolve(model, plan), _resolve(baseline, plan)
        tasks = [t for t in tasks if t in present]
        if not tasks:
            continue
        a, b, seeds = _per_seed(runs, measure, model, baseline, tasks, depth)
        if len(seeds) < 3:
            continue
        base = {
            "claim": name,
            "statement": statement,
            "measure": measure,
            "n_seeds": len(seeds),
            "model": model,
            "baseline": baseline,
            "tasks": tasks,
            "depth": depth,
            "unconverged_runs": _unconverged(runs, (model, baseline), tasks, depth),
        }
        if kind == "equivalent":
            test = stats.equivalence_test(a, b, plan["accuracy_margin"], alpha=alpha)
            record = {
                **base,
                "effect": test["effect"],
                "ci_low": test["tost_low"],
                "ci_high": test["tost_high"],
                "p_raw": test["p_tost"],
                "mde_80": test["mde_80"],
                "margin": plan["accuracy_margin"],
                "ci_level": 1 - 2 * alpha,
                "d_z": test["d_z"],
            }
        else:
            test = stats.paired_difference(a, b, alpha=alpha)
            record = {
                **base,
                "effect": test["effect"],
                "ci_low": test["ci_low"],
                "ci_high": test["ci_high"],
                "p_raw": test["p"],
                "mde_80": test["mde_80"],
                "margin": None,
                "ci_level": 1 - alpha,
                "d_z": test["d_z"],
                "p_wilcoxon": test["p_wilcoxon"],
            }
        records.append(record)
    corr = correlations(runs, depth=depth, plan=plan) if set(NONLINEAR_TASKS) & present else None
    if corr is not None:
        within = corr["within_task"]
        n_eff = within["n"] - within["groups"] + 1
        records.append(
            {
                "claim": "E3",
                "statement": "more curved representations are more accurate (within task)",
                "measure": f"pearson r({plan['correlation_measure']}, test_accuracy)",
                "n_seeds": len({r["seed"] for r in runs}),
                "effect": within["pearson_r"],
                "ci_low": within["pearson_ci_low"],
                "ci_high": within["pearson_ci_high"],
                "p_raw": within["pearson_p"],
                "mde_80": _correlation_mde(n_eff, alpha),
                "margin": None,
                "ci_level": 1 - alpha,
                "d_z": None,
                "pooled_r": corr["pooled"]["pearson_r"],
                "spearman_within": within["spearman_rho"],
                "paper_r": plan["paper_r"],
                "depth": depth,
            }
        )
    adjusted = stats.holm([r["p_raw"] for r in records]) if records else []
    for record, p in zip(records, adjusted, strict=True):
        record["p"] = p
        if record["margin"] is not None:
            record["verdict"] = stats.equivalence_verdict(
                p, record["ci_low"], record["ci_high"], record["margin"], alpha=alpha
            )
        else:
            record["verdict"] = stats.directional_verdict(
                record["ci_low"], record["ci_high"], p, alpha=alpha
            )
    ordered = []
    for record in records:
        head = {k: record[k] for k in CLAIM_FIELDS}
        ordered.append(head | {k: v for k, v in record.items() if k not in head})
    return ordered


def per_task_effects(runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS):
    """Per task: the paired difference gated − each other model over seeds, for test accuracy
    and log ∫|K| dA, with the unadjusted 95% interval and d_z (the forest plot's rows)."""
    rows = []
    present = [t for t in TASKS if t in {r["task"] for r in runs}]
    models = sorted({r["model"] for r in runs} - {plan["gated"]}, key=VARIANTS.index)
    for measure in ("test_accuracy", "log_curvature_total_abs"):
        for task in present:
            for other in models:
                a, b, seeds = _per_seed(runs, measure, plan["gated"], other, [task], depth)
                if len(seeds) < 3:
                    continue
                test = stats.paired_difference(a, b, alpha=plan["alpha"])
                rows.append(
                    {
                        "measure": measure,
                        "task": task,
                        "model": plan["gated"],
                        "baseline": other,
                        "depth": depth,
                        "n_seeds": len(seeds),
                        **{k: test[k] for k in ("effect", "ci_low", "ci_high", "p", "d_z")},
                        "mde_80": test["mde_80"],
                    }
                )
    return rows


def analyse(runs: Sequence[dict], *, plan: dict = ANALYSIS) -> dict:
    """Claims, per-task effects and correlations for every depth present in ``runs``."""
    depths = sorted({r["depth"] for r in runs})
    result = {"claims": [], "effects": [], "correlations": []}
    for depth in depths:
        result["claims"].extend(claims(runs, depth=depth, plan=plan))
        result["effects"].extend(per_task_effects(runs, depth=depth, plan=plan))
        if set(NONLINEAR_TASKS) & {r["task"] for r in runs}:
            result["correlations"].append(correlations(runs, depth=depth, plan=plan))
    if len(depths) > 1:
        for record in result["claims"]:
            record["claim"] = f"{record['claim']}@depth{record['depth']}"
    return result


def reproduce(
    scale: str = "small",
    out=None,
    *,
    device="auto",
    seeds: int | None = None,
    progress: bool = True,
    directory=None,
    refresh: bool = False,
    figures: bool = True,
    **overrides,
) -> dict:
    """Run the study and write its files into ``out`` (module docstring); returns a dict with
    the paths (``runs``, ``claims``, ...), the ``claims`` records and the wall ``seconds``.

    ``seeds``: the number of seeds 0..seeds−1 (overrides the scale).  ``directory``: the run
    cache (default: $CURVLAB_CACHE or .curvlab-cache/).
    """
    if out is None:
        raise ValueError("out: expected a directory to write the results into")
    if seeds is not None:
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 3:
            raise ValueError(f"seeds: expected an integer >= 3, got {seeds!r}")
        overrides["seeds"] = list(range(seeds))
    start = time.perf_counter()
    config = reproduce_config(scale, **overrides)
    runs, curve_rows = run_study(
        scale,
        device=device,
        directory=directory,
        refresh=refresh,
        progress=progress,
        **overrides,
    )
    trained = time.perf_counter() - start
    result = analyse(runs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "runs": write_csv([{k: r[k] for k in RUN_COLUMNS} for r in runs], out / "runs.csv"),
        "loss_curves": write_csv(curve_rows, out / "loss_curves.csv"),
        "effects": write_csv(result["effects"], out / "effects.csv"),
    }
    paths["claims"] = _write_json(result["claims"], out / "claims.json")
    paths["correlations"] = _write_json(result["correlations"], out / "correlations.json")
    if figures:
        from curvlab.experiments import figures as figs

        paths.update(figs.write_figures(runs, curve_rows, result, out))
    seconds = time.perf_counter() - start
    meta = {
        "scale": scale,
        "config": config,
        "analysis": ANALYSIS,
        "device": _resolve_device(device),
        "code_version": code_version(CODE_MODULES),
        "runs": len(runs),
        "unconverged_runs": sum(not r["converged"] for r in runs),
        "train_seconds": trained,
        "seconds": seconds,
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
    }
    paths["meta"] = _write_json(meta, out / "meta.json")
    return {
        "paths": {k: str(v) for k, v in paths.items()},
        "claims": result["claims"],
        "seconds": seconds,
    }


def _write_json(value, path: Path) -> Path:
    path.write_text(json.dumps(value, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path
