"""The Part II pipeline: ensembles equal the loop, the measures are right, the files complete."""

import copy
import csv
import json
import math

import pytest
import torch

from curvlab.analysis import stats
from curvlab.analysis.empirical import SENSITIVITY_FIELDS
from curvlab.analysis.plan import PLAN, PLAN_V2, plan_sha256
from curvlab.analysis.schema import validate_claims_document
from curvlab.data.tasks import make_task
from curvlab.geometry.curvature import gaussian_curvature
from curvlab.measurement.sheets import (
    data_region_grid,
    direction_measures,
    finite_difference_rho,
    sheet_from_jets,
)
from curvlab.models.attention import VARIANTS, build_classifier, representation_map
from curvlab.models.convergence import budgets
from curvlab.models.ensemble import (
    ensemble_jets,
    ensemble_logits,
    plateau,
    stack,
    train_ensemble,
    train_loop,
)
from curvlab.studies.ensemble_benchmark import benchmark_ensemble
from curvlab.studies.reproduce import (
    CLAIM_FIELDS,
    REPRODUCE,
    RUN_COLUMNS,
    STUDY_COLUMNS,
    StudyResult,
)
from curvlab.studies.study import run_study

SMALL = {"d_model": 4, "n_heads": 1, "n_tokens": 2}


def _members(variant, seeds=(0, 1, 2)):
    models = [build_classifier(variant, seed=s, **SMALL).double() for s in seeds]
    tasks = [make_task("moons", n_train=48, n_test=8, seed=s) for s in seeds]
    points = torch.stack([t.train_points for t in tasks])
    labels = torch.stack([t.train_labels for t in tasks]).double()
    return models, points, labels


CASES = [(v, "vmap") for v in VARIANTS] + [(v, "einsum") for v in VARIANTS[-2:]]


@pytest.mark.parametrize(("variant", "backend"), CASES)
def test_ensemble_training_equals_the_per_seed_loop_in_float64(variant, backend):
    models, points, labels = _members(variant)
    ens = stack(copy.deepcopy(models))
    fitted = train_ensemble(ens, points, labels, epochs=15, learning_rate=0.05, backend=backend)
    loop = copy.deepcopy(models)
    records = train_loop(loop, points, labels, epochs=15, learning_rate=0.05, device="cpu")
    for e, model in enumerate(loop):
        for name, parameter in model.named_parameters():
            assert torch.allclose(ens.params[name][e], parameter, atol=1e-5, rtol=0)
        assert math.isclose(fitted["train_loss"][e], records[e]["train_loss"], abs_tol=1e-5)
    moved = sum((ens.params[n][0] - p).abs().sum() for n, p in models[0].named_parameters())
    assert moved > 1e-3  # the comparison is of trained weights, not of the initial ones


def test_ensemble_forward_equals_each_member_module():
    models, points, _ = _members("gated_headwise")
    ens = stack(models)
    with torch.no_grad():
        expected = torch.stack([m(x) for m, x in zip(models, points, strict=True)])
        assert torch.allclose(ensemble_logits(ens, points), expected, atol=1e-12)
    with pytest.raises(ValueError, match="one shape"):
        stack([models[0], build_classifier("ungated", **SMALL).double()])


def test_jets_give_the_core_gaussian_curvature_of_each_member():
    models, _, _ = _members("gated_elementwise")
    ens = stack(models)
    nodes = (
        2 * torch.rand(3, 6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) - 1
    )
    J, H = ensemble_jets(ens, nodes)
    sheet = sheet_from_jets(J, H, torch.ones(3, 6, dtype=torch.float64))
    for e, model in enumerate(models):
        K = gaussian_curvature(representation_map(model), nodes[e])
        assert torch.allclose(sheet["K"][e], K, atol=1e-10, rtol=1e-6)


def test_batched_sheet_measure_equals_the_core_sheet_measure_over_the_data_region():
    from curvlab.geometry.measures import sheet_measures

    models, points, _ = _members("gated_elementwise")
    ens = stack(models)
    nodes, weights = data_region_grid(points, 6)
    J, H = ensemble_jets(ens, nodes)
    sheet = sheet_from_jets(J, H, weights)
    for e, model in enumerate(models):
        low, high = points[e].amin(0), points[e].amax(0)
        patch = ((float(low[0]), float(high[0])), (float(low[1]), float(high[1])))
        near = set(map(tuple, nodes[e][weights[e] > 0].tolist()))

        def region(grid, near=near):
            return torch.tensor([tuple(p) in near for p in grid.tolist()])

        core = sheet_measures(representation_map(model), patch, 6, region=region)
        assert math.isclose(
            core.curvature_total_abs, float(sheet["curvature_total_abs"][e]), rel_tol=1e-6
        )
        assert math.isclose(core.sheet_area, float(sheet["sheet_area"][e]), rel_tol=1e-6)


def _cylinder_jets(radius, points):
    """Exact jets of (u, v) ↦ (R cos(u/R), R sin(u/R), v): K = 0, normal curvature 1/R along u."""
    u = points[..., 0] / radius
    J = torch.zeros(*points.shape[:-1], 3, 2, dtype=torch.float64)
    J[..., 0, 0], J[..., 1, 0], J[..., 2, 1] = -torch.sin(u), torch.cos(u), 1.0
    H = torch.zeros(*points.shape[:-1], 3, 2, 2, dtype=torch.float64)
    H[..., 0, 0, 0], H[..., 1, 0, 0] = -torch.cos(u) / radius, -torch.sin(u) / radius
    return J, H


def test_measures_on_closed_form_surfaces():
    points = torch.rand(1, 5, 2, dtype=torch.float64)
    J, H = _cylinder_jets(2.0, points)
    sheet = sheet_from_jets(J, H, torch.full((1, 5), 0.1, dtype=torch.float64))
    assert torch.allclose(
        sheet["curvature_total_abs"], torch.zeros(1, dtype=torch.float64), atol=1e-14
    )
    along_u = torch.tensor([1.0, 0.0], dtype=torch.float64).expand(1, 5, 1, 2)
    along_v = torch.tensor([0.0, 1.0], dtype=torch.float64).expand(1, 5, 1, 2)
    bent = direction_measures(J, H, along_u)
    assert torch.allclose(bent["rho_normal"], torch.full((1, 5, 1), 0.25, dtype=torch.float64))
    assert torch.allclose(direction_measures(J, H, along_v)["rho"], torch.zeros(1, 5, 1).double())

    def sphere(x):  # the unit sphere as a graph near the pole, K = 1
        return torch.stack([x[..., 0], x[..., 1], torch.sqrt(1 - (x**2).sum(-1))], dim=-1)

    x = torch.zeros(1, 2, dtype=torch.float64)
    assert math.isclose(gaussian_curvature(sphere, x).item(), 1.0, rel_tol=1e-9)
    u = torch.tensor([[0.6, 0.8]], dtype=torch.float64)
    for h in (1e-2, 1e-3, 1e-4):  # ρ_h/h → ‖H[u,u]‖/(2‖Ju‖) = 1/2 at the pole
        assert math.isclose(finite_difference_rho(sphere, x, u, h).item(), 0.5, rel_tol=1e-4)


def test_finite_difference_rho_is_stable_in_h_and_tends_to_the_autograd_limit():
    models, points, labels = _members("gated_elementwise")
    ens = stack(models)
    train_ensemble(ens, points, labels, epochs=30, learning_rate=0.05)
    x = points[:, :8]
    directions = torch.nn.functional.normalize(
        torch.randn(3, 8, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1)),
        dim=-1,
    )
    J, H = ensemble_jets(ens, x)
    limit = direction_measures(J, H, directions)["rho"][0, :, 0]
    member = representation_map(ens.member(0))

    def batched(p):
        return torch.stack([member(q) for q in p])

    for h in (1e-3, 1e-4):
        fd = finite_difference_rho(batched, x[0], directions[0, :, 0], h)
        assert torch.allclose(fd, limit, rtol=1e-4, atol=1e-8)


def test_data_region_weights_only_cells_near_the_data():
    task = make_task("spirals3", n_train=200, n_test=1, seed=0)
    nodes, weights = data_region_grid(task.train_points[None], 12)
    assert nodes.shape == (1, 144, 2)
    assert 0 < int((weights > 0).sum()) <= 144
    far = torch.cdist(nodes[0], task.train_points).amin(1) > 0.5
    assert not (weights[0][far] > 0).any()


def test_plateau_criterion():
    assert plateau([1.0, 0.5, 0.5, 0.5, 0.5])[0]
    assert not plateau([1.0, 0.9, 0.8, 0.7, 0.6])[0]
    assert plateau([1.0, 0.5, 1e-4, 5e-5, 1e-5])[0]  # fitted: below the loss floor


@pytest.mark.slow
def test_tiny_reproduction_writes_complete_consistent_files(tmp_path, tiny_study, tiny_options):
    tiny = tiny_study(geometric=False)
    result = run_study(REPRODUCE, "small", tiny_options(), **tiny)
    result.write(tmp_path / "out")
    assert StudyResult.read(tmp_path / "out") == result  # the files are the result
    out = tmp_path / "out"
    with (out / "runs.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == STUDY_COLUMNS + RUN_COLUMNS
    by_rule = {
        key: [r for r in rows if (r["study"], r["rule"]) == key]
        for key in {(r["study"], r["rule"]) for r in rows}
    }
    assert sorted(by_rule) == [
        ("confirmatory", "fixed_budget"),
        ("confirmatory", "ladder"),
        ("exploratory", "ladder"),
    ]
    assert len(by_rule["exploratory", "ladder"]) == 4 * 4 * len(VARIANTS)
    fresh = {int(r["seed"]) for r in by_rule["confirmatory", "fixed_budget"]}
    assert fresh == set(PLAN_V2.confirmatory_seeds[:3]) and not fresh & set(range(4))
    assert {r["converged"] for r in rows} <= {"True", "False"}
    ladder = budgets(6, 1)
    assert {int(r["epochs"]) for r in rows} <= set(ladder)
    # the fixed budget is the ladder's first rung; the ladder keeps a shorter budget only
    # where the run converged there
    assert {int(r["epochs"]) for r in by_rule["confirmatory", "fixed_budget"]} == {6}
    assert all(
        r["converged"] == "True"
        for r in rows
        if r["rule"] == "ladder" and int(r["epochs"]) < ladder[-1]
    )
    # the quadrature check ran on every plan-stride seed at twice the grid
    primary = by_rule["confirmatory", "fixed_budget"]
    checked = [r for r in primary if r["curvature_total_abs_fine"]]
    stride = PLAN_V2.curvature.convergence_seed_stride
    assert {int(r["seed"]) for r in checked} == {s for s in fresh if s % stride == 0}
    # the adaptive rule on the plan's models only, from the second base grid on checked seeds
    adaptive = PLAN_V2.curvature.models
    assert all(bool(r["curvature_adaptive"]) == (r["model"] in adaptive) for r in primary)
    assert all(
        bool(r["curvature_adaptive_check"]) == (r["model"] in adaptive and r in checked)
        for r in primary
    )
    assert not any(r["curvature_adaptive"] for r in by_rule["exploratory", "ladder"])
    with (out / "loss_curves.csv").open() as handle:
        curve_rows = list(csv.DictReader(handle))
    assert all(0 <= int(c["epoch"]) < int(c["budget"]) for c in curve_rows)
    document = json.loads((out / "claims.json").read_text())
    validate_claims_document(document, plan=PLAN_V2)  # the schema, the plan's hash and Holm
    assert document == result.claims_document()
    claims = document["claims"]
    for claim in claims:
        assert tuple(claim)[: len(CLAIM_FIELDS)] == CLAIM_FIELDS
        assert claim["n_seeds"] == (4 if claim["study"] == "exploratory" else 3)
        assert stats.verdict_follows(claim)
        assert {f"converged_{k}" for k in SENSITIVITY_FIELDS} <= set(claim)
    for study in ("exploratory", "confirmatory"):
        named = {c["claim"] for c in claims if c["study"] == study}
        assert named >= {"E1-sheet", "E1-specific", "E1-linear", "E2", "E2-linear", "E3"}
    confirmed = {c["claim"]: c for c in claims if c["study"] == "confirmatory"}
    assert confirmed["E1-sheet"]["measure"] == "log_curvature_adaptive"
    assert confirmed["E1-capped"]["p_holm"] is None  # secondary: outside the Holm family
    meta = json.loads((out / "meta.json").read_text())
    assert meta["plan_sha256"] == document["plan_sha256"] == plan_sha256(PLAN_V2)
    assert meta["exploratory_plan_sha256"] == plan_sha256(PLAN)
    estimators = meta["confirmatory"]["estimators"]
    uniform, adaptive = estimators["uniform"], estimators["adaptive"]
    assert uniform["n_runs"] == len(checked)
    assert uniform["resolution_check"] == 2 * uniform["resolution"]
    assert uniform["converged"] == (uniform["median_log_ratio"] < uniform["threshold"])
    assert adaptive["n_runs"] == sum(bool(r["curvature_adaptive_check"]) for r in primary)
    assert (adaptive["resolution"], adaptive["resolution_check"]) == (
        8,
        16,
    )  # the tiny study's bases
    assert adaptive["converged"] == (
        max(adaptive["median_log_ratio"], adaptive["p90_log_ratio"]) < adaptive["threshold"]
    )
    assert adaptive["evaluations"]["sheets"] == sum(bool(r["curvature_adaptive"]) for r in primary)
    assert not meta["confirmatory"]["follows_plan"]  # a tiny study changes the protocol
    from curvlab.plotting import write_figures  # what the command line draws

    write_figures(result.runs, result.curves, {"effects": result.effects}, out)
    for name in ("task_effects.png", "loss_curves.png", "curvature_accuracy.png"):
        assert (out / name).stat().st_size > 0
    again = run_study(REPRODUCE, "small", tiny_options(), **tiny)
    assert again.claims_document() == document  # cached runs, same numbers
    assert not (tmp_path / "again").exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("backend", ["einsum", "vmap"])
def test_ensemble_on_cuda_equals_the_cpu_ensemble_in_float64(backend):
    models, points, labels = _members("gated_elementwise")
    on_cpu = stack(copy.deepcopy(models))
    on_gpu = stack(copy.deepcopy(models)).to("cuda")
    settings = {"epochs": 15, "learning_rate": 0.05, "backend": backend, "schedule": "cosine"}
    expected = train_ensemble(on_cpu, points, labels, **settings)
    fitted = train_ensemble(on_gpu, points.cuda(), labels.cuda(), **settings)
    for name, parameter in on_cpu.params.items():
        assert on_gpu.params[name].device.type == "cuda"
        assert torch.allclose(on_gpu.params[name].cpu(), parameter, atol=1e-8, rtol=0)
    assert torch.allclose(fitted["loss_curve"], expected["loss_curve"], atol=1e-10, rtol=0)
    x = points[:, :5]
    J, H = ensemble_jets(on_cpu, x)
    J_gpu, H_gpu = ensemble_jets(on_gpu, x.cuda())
    assert torch.allclose(J_gpu.cpu(), J, atol=1e-8) and torch.allclose(H_gpu.cpu(), H, atol=1e-8)


def test_ensemble_benchmark_times_all_three_on_the_named_device():
    result = benchmark_ensemble(seeds=2, epochs=3, n_train=8, device="cpu")
    assert result["device"] == "cpu" and result["seeds"] == 2
    for key in ("loop_seconds", "vmap_seconds", "einsum_seconds"):
        assert result[key] > 0
    assert math.isclose(result["einsum_speedup"], result["loop_seconds"] / result["einsum_seconds"])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device"):
            benchmark_ensemble(seeds=2, epochs=3, n_train=8, device="cuda")


@pytest.mark.slow
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_a_tiny_study_on_cuda_matches_the_cpu_study(tmp_path, tiny_study, tiny_options):
    tiny = tiny_study(retrain_doublings=0, geometric=False)
    on_cpu = run_study(REPRODUCE, "small", tiny_options(device="cpu"), **tiny)
    on_gpu = run_study(REPRODUCE, "small", tiny_options(device="cuda"), **tiny)
    on_cpu.write(tmp_path / "cpu")
    on_gpu.write(tmp_path / "gpu")
    assert json.loads((tmp_path / "gpu" / "meta.json").read_text())["device"] == "cuda"
    assert on_gpu.meta["device"] == "cuda" and on_cpu.meta["device"] == "cpu"
    with open(tmp_path / "cpu" / "runs.csv") as a, open(tmp_path / "gpu" / "runs.csv") as b:
        cpu_rows, gpu_rows = list(csv.DictReader(a)), list(csv.DictReader(b))
    assert len(cpu_rows) == len(gpu_rows) == 4 * 4 * len(VARIANTS)
    gaps = []
    for x, y in zip(cpu_rows, gpu_rows, strict=True):  # float32 training: rounding differs
        assert (x["task"], x["model"], x["seed"]) == (y["task"], y["model"], y["seed"])
        assert math.isclose(float(x["train_loss"]), float(y["train_loss"]), rel_tol=1e-3)
        assert abs(float(x["test_accuracy"]) - float(y["test_accuracy"])) <= 0.02
        gaps.append(abs(float(x["rho"]) / float(y["rho"]) - 1))
    # ρ of a nearly flat sheet is rounding noise: compare the typical run, not every run
    assert sorted(gaps)[len(gaps) // 2] < 1e-3
