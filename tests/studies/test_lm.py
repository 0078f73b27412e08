"""The language-model study: the tiny configuration end to end, its measures against hand
computations and finite differences, its refusals and its determinism."""

import json
import math

import pytest
import torch

from curvlab.data.corpus import Corpus, CorpusFingerprint
from curvlab.geometry.finite_differences import finite_difference_gaussian_curvature
from curvlab.geometry.gauss_equation import jets, surface_from_jets
from curvlab.measurement import language_model as measures
from curvlab.measurement import loss_spikes as spikes
from curvlab.measurement.slices import triangle_nodes
from curvlab.models.language_model import ElementaryLayerNorm, build_language_model, curvature_copy
from curvlab.models.language_model_training import train_language_model
from curvlab.studies import lm as study
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Options, run_study

TINY = {
    "context": 8,
    "d_model": 8,
    "n_heads": 2,
    "depth": 2,
    "steps": 20,
    "batch_size": 4,
    "warmup_steps": 2,
    "spike_window": 5,
    "final_window": 3,
    "validation_windows": 6,
    "slices": 1,
    "resolution": 2,
    "seeds": [0, 1, 2],
}


def _tiny_model(variant="gated_elementwise", seed=0):
    return build_language_model(variant, vocab_size=11, context=6, d_model=8, n_heads=2, seed=seed)


@pytest.fixture(scope="module")
def tiny_result(tmp_path_factory):
    directory = tmp_path_factory.mktemp("lm")
    out = directory / "out"
    options = Options(device="cpu", directory=directory / "cache", progress=False)
    result = run_study(study.LM, "small", options, **TINY)
    result.write(out)
    return result, out


def test_the_tiny_configuration_writes_a_study_result_with_finite_intervals(tiny_result):
    result, out = tiny_result
    assert StudyResult.read(out) == result
    assert len(result.runs) == 4 * 3
    claims = json.loads((out / "claims.json").read_text())
    assert len(claims) == len(study.COMPARISONS) * len(study.MEASURES)
    for claim in claims:
        assert claim["label"] == "exploratory" and claim["prediction"]
        assert math.isfinite(claim["ci_low"]) and math.isfinite(claim["ci_high"])
        assert claim["ci_low"] <= claim["effect"] <= claim["ci_high"]
        # 3 seeds: the exact p is at least 0.25; a sink claim without a sink is not testable
        if claim["testable"]:
            assert claim["verdict"] == "undecidable" and claim["reason"] is None
        else:
            assert claim["measure"] == "sink" and claim["verdict"] == "not testable here"
            assert claim["reason"].startswith("no sink")
        assert claim["p_floor"] == 0.25 and claim["p_floor_holm"] == 1.0
        assert not claim["decidable"] and claim["seeds_needed"] > 3
        assert claim["p"] <= claim["p_holm"] <= 1
    convergence = result.meta["convergence"]
    assert convergence["resolutions"] == [2, 4]
    assert result.meta["diverged"].keys() == set(study.lm_config()["variants"])
    assert convergence["count"] + convergence["undefined"] == 12 * 2 * 2  # runs, layers, sheets
    assert 0 <= convergence["median"] <= convergence["p90"] < math.inf
    assert result.meta["corpus"]["text_sha256"] == study.lm_config()["corpus_text_sha256"]
    for run in result.runs:
        assert 0 < run["sink_layer1"] < 1 and run["max_activation_layer2"] > 0
        assert run["curvature_attention_layer1"] >= 0 and run["bits_per_character"] > 0
    steps = {(c["variant"], c["seed"], c["run"]) for c in result.curves}
    assert len(steps) == 12 * 2


def test_a_second_call_reads_every_run_from_the_cache(tiny_result, tmp_path, monkeypatch):
    result, out = tiny_result

    def refuse(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(study, "train_language_model", refuse)
    options = Options(device="cpu", directory=out.parent / "cache", progress=False)
    again = run_study(study.LM, "small", options, **TINY)
    assert again.runs == result.runs and again.claims == result.claims


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_the_curvature_copy_computes_the_model_and_its_layernorm_hessian():
    model = _tiny_model("ablation", seed=6)
    copy = curvature_copy(model)
    tokens = torch.randint(11, (2, 6), generator=torch.Generator().manual_seed(3))
    assert torch.allclose(copy(tokens), model(tokens).double(), atol=1e-5)
    assert not any(isinstance(m, torch.nn.LayerNorm) for m in copy.modules())
    norm = ElementaryLayerNorm(model.final_norm.double())
    A = torch.randn(8, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    u = torch.tensor([0.3, -0.2], dtype=torch.float64)
    forward = torch.func.jacfwd(torch.func.jacfwd(lambda x: norm(A @ x)))(u)
    reverse = torch.func.jacrev(torch.func.jacrev(lambda x: model.final_norm(A @ x)))(u)
    assert torch.allclose(forward, reverse, atol=1e-10)


def _layer_norm_slice():
    """A LayerNorm over 5 features with weights and bias, the matrix A of a 2-D slice x = A u
    and a point u."""
    norm = torch.nn.LayerNorm(5).double()
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 1.5, 5))
        norm.bias.copy_(torch.linspace(-0.2, 0.2, 5))
    A = torch.randn(5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    return norm, A, torch.tensor([0.3, -0.2], dtype=torch.float64)


def _layer_norm(norm):
    return lambda x: torch.nn.functional.layer_norm(x, (5,), norm.weight, norm.bias, norm.eps)


def test_the_elementary_layernorm_hessian_by_nested_forward_mode_is_the_true_one():
    # ElementaryLayerNorm differentiated forward over forward (by the engine's jets and by
    # jacfwd(jacfwd)) equals torch.func.hessian of F.layer_norm, reverse over reverse, and the
    # central difference of the reverse-mode Jacobian
    norm, A, u = _layer_norm_slice()
    torch_norm = _layer_norm(norm)
    jacobian = torch.func.jacrev(lambda x: torch_norm(A @ x))
    step = 1e-5
    finite = torch.stack(
        [
            (jacobian(u + step * e) - jacobian(u - step * e)) / (2 * step)
            for e in torch.eye(2, dtype=torch.float64)
        ]
    ).permute(1, 2, 0)  # (5, 2, 2)
    hessian = torch.func.hessian(lambda x: torch_norm(A @ x))(u)
    reverse = torch.func.jacrev(jacobian)(u)
    elementary = ElementaryLayerNorm(norm)
    forward = torch.func.jacfwd(torch.func.jacfwd(lambda x: elementary(A @ x)))(u)
    _, engine = jets(lambda x: elementary(A @ x), u[None])
    for computed in (forward, engine[0], reverse):
        assert torch.allclose(computed, hessian, atol=1e-10)
    assert torch.allclose(forward, finite, atol=1e-8)


def test_nested_forward_mode_through_torch_layer_norm_is_wrong_in_the_pinned_torch():
    """Documents pytorch/pytorch#196700 (https://github.com/pytorch/pytorch/issues/196700), the
    reason for ElementaryLayerNorm: in the pinned torch (2.13), jacfwd(jacfwd(F.layer_norm))
    is not the Hessian (nor symmetric in its two derivative indices); it is layer_norm's
    first-order JVP rule differentiated with the saved mean and rstd held constant.  Skipped
    where the installed torch computes it correctly: the upstream bug is then fixed, and
    ElementaryLayerNorm could go."""
    norm, A, u = _layer_norm_slice()
    torch_norm = _layer_norm(norm)
    nested = torch.func.jacfwd(torch.func.jacfwd(lambda x: torch_norm(A @ x)))(u)  # (5, 2, 2)
    hessian = torch.func.hessian(lambda x: torch_norm(A @ x))(u)
    if torch.allclose(nested, hessian, atol=1e-8):
        pytest.skip(f"torch {torch.__version__} no longer shows pytorch/pytorch#196700")
    assert not torch.allclose(nested, nested.transpose(1, 2), atol=1e-6)
    x = A @ u
    mean = x.mean()
    rstd = 1 / torch.sqrt(((x - mean) ** 2).mean() + norm.eps)

    def jvp_rule(v, tangent):  # d LN(A v) along A tangent, the mean and rstd of x frozen
        normalised = (A @ v - mean) * rstd
        centred = A @ tangent - (A @ tangent).mean()
        return norm.weight * rstd * (centred - normalised * (normalised * centred).mean())

    frozen = torch.stack(
        [
            torch.func.jacfwd(lambda v, t=t: jvp_rule(v, t))(u)
            for t in torch.eye(2, dtype=torch.float64)
        ],
        dim=1,
    )  # (5, 2, 2): [output, tangent, derivative]
    assert torch.allclose(nested, frozen, atol=1e-10)


def test_training_is_deterministic_per_seed(one_thread):
    config = {**study.lm_config("small", **TINY), "device": "cpu"}
    ids = torch.randint(11, (500,), generator=torch.Generator().manual_seed(0))
    first = train_language_model(config, "gated_headwise", 1, ids, 11)
    second = train_language_model(config, "gated_headwise", 1, ids, 11)
    other = train_language_model(config, "gated_headwise", 2, ids, 11)
    assert first[1] == second[1] and first[1] != other[1]
    for p, q in zip(first[0].parameters(), second[0].parameters(), strict=True):
        assert torch.equal(p, q)


def test_the_attention_sink_is_the_uniform_causal_share_when_scores_vanish():
    # with zero query and key weights every score is 0: query t attends 1/(t + 1) to each key
    model = _tiny_model()
    with torch.no_grad():
        for block in model.blocks:
            qkv = block.attention.query_key_value
            qkv.weight[: 2 * 8].zero_()
            qkv.bias[: 2 * 8].zero_()
    tokens = torch.randint(11, (3, 6), generator=torch.Generator().manual_seed(1))
    measured = measures.layer_statistics(model, tokens)
    expected = sum(1 / (t + 1) for t in range(1, 6)) / 5
    assert measured["sink"] == pytest.approx([expected, expected], abs=1e-6)


@torch.no_grad()
def test_the_measures_equal_a_hand_written_forward_pass():
    model = _tiny_model("gated_headwise", seed=4)
    tokens = torch.randint(11, (2, 6), generator=torch.Generator().manual_seed(2))
    measured = measures.layer_statistics(model, tokens)
    h = model.embed(tokens)
    for layer, block in enumerate(model.blocks):
        a = block.attention
        x = torch.nn.functional.layer_norm(
            h, (8,), block.attention_block.norm.weight, block.attention_block.norm.bias
        )
        q = x @ a.query_key_value.weight[:8].T + a.query_key_value.bias[:8]
        k = x @ a.query_key_value.weight[8:16].T + a.query_key_value.bias[8:16]
        sink = []
        for head in range(2):
            c = slice(4 * head, 4 * head + 4)
            for b in range(2):
                for t in range(1, 6):
                    scores = (k[b, : t + 1, c] @ q[b, t, c]) / 2.0  # keys 0..t, √hs = 2
                    sink.append(float(torch.softmax(scores, 0)[0]))
        h = block(h)
        assert measured["sink"][layer] == pytest.approx(sum(sink) / len(sink), rel=1e-5)
        assert measured["max_activation"][layer] == pytest.approx(float(h.abs().max()))


@torch.no_grad()
@pytest.mark.parametrize("variant", ["gated_headwise", "gated_elementwise"])
def test_the_gate_scores_are_the_sigmoid_of_the_gate_on_the_normed_input(variant):
    """A gate's mean score and its share below 0.1, by hand; a gate whose bias shuts it reads
    as all closed, and a layer without a gate has none."""
    model = _tiny_model(variant, seed=6)
    tokens = torch.randint(11, (2, 6), generator=torch.Generator().manual_seed(3))
    measured = measures.layer_statistics(model, tokens)
    h = model.embed(tokens)
    for layer, block in enumerate(model.blocks):
        x = torch.nn.functional.layer_norm(
            h, (8,), block.attention_block.norm.weight, block.attention_block.norm.bias
        )
        scores = torch.sigmoid(x @ block.attention.gate.weight.T + block.attention.gate.bias)
        assert scores.shape[-1] == (2 if variant == "gated_headwise" else 8)
        assert measured["gate_mean"][layer] == pytest.approx(float(scores.mean()), rel=1e-6)
        share = float((scores < measures.SPARSE_GATE).double().mean())
        assert measured["gate_sparse"][layer] == pytest.approx(share)
        h = block(h)
    for block in model.blocks:
        block.attention.gate.bias.fill_(-50.0)
        block.attention.gate.weight.zero_()
    shut = measures.layer_statistics(model, tokens)
    assert shut["gate_sparse"] == [1.0, 1.0] and max(shut["gate_mean"]) < 1e-20
    for variant in ("ungated", "ablation"):
        plain = measures.layer_statistics(_tiny_model(variant), tokens)
        assert plain["gate_mean"] == [None, None] == plain["gate_sparse"]


def test_the_slice_curvature_agrees_with_finite_differences():
    model = curvature_copy(_tiny_model("gated_elementwise", seed=3))
    tokens = torch.randint(11, (3, 6), generator=torch.Generator().manual_seed(5))
    f = measures.context_slice_map(model, tokens)
    u, _ = triangle_nodes(2)
    jacobian, hessian = jets(f, u)
    for n in range(4):  # layer 1 attention, layer 1 residual, layer 2 attention, layer 2 residual
        rows = slice(8 * n, 8 * n + 8)
        K = surface_from_jets(jacobian[:, rows], hessian[:, rows])["K"]
        K_fd = finite_difference_gaussian_curvature(lambda v, r=rows: f(v)[r], u, step=1e-4)
        assert torch.allclose(K, K_fd, rtol=1e-4, atol=1e-6 * float(K.abs().max()))
        assert (K != 0).all()  # an input slice: no sheet is flat here
    # the integral: the midpoint rule's sum of |K| √det g over the triangle's centroids
    measured = measures.context_slice_curvature(_tiny_model("gated_elementwise", seed=3), tokens, 2)
    assert set(measured["integrals"]) == {(l, s) for l in (0, 1) for s in measures.SHEETS}
    coarse, fine = measured["integrals"][(0, "attention")]
    assert coarse > 0 and fine > 0 and abs(math.log(coarse / fine)) < 0.5


def test_the_triangle_rule_is_exact_for_linear_integrands():
    for P in (1, 3, 7):
        u, w = triangle_nodes(P)
        assert len(u) == P * P and ((u >= 0).all() and (u.sum(1) <= 1).all())
        assert float((1 + 2 * u[:, 0] - 3 * u[:, 1]).sum()) * w == pytest.approx(0.5 + 1 / 3 - 0.5)


def test_spikes_are_counted_by_the_stated_rule():
    assert spikes.count_spikes([3.0, 2.0, 1.0, 1.6, 0.9, 1.0], factor=1.5, window=2) == 1
    assert spikes.count_spikes([3.0, 2.0, 1.0, 1.6, 0.9, 1.0], factor=1.5, window=1) == 1
    assert spikes.count_spikes([1.0, 1.4, 1.6], factor=1.5, window=50) == 1
    assert spikes.count_spikes([2.0, 1.0, None], factor=1.5, window=5) == 1
    assert spikes.count_spikes([2.0, 1.9, 1.8], factor=1.5, window=5) == 0
    assert spikes.spike_steps([3.0, 2.0, 1.0, 1.6, 0.9, 1.0], factor=1.5, window=2) == [3]
    assert spikes.spike_steps([2.0, 1.0, None, 1.0, 9.0], factor=1.5, window=5) == [2, 4]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: study.lm_config("huge"), "scale"),
        (lambda: study.lm_config("small", variants=["gated_twice"]), "variants"),
        (lambda: study.lm_config("small", seeds=[]), "seeds"),
        (lambda: study.lm_config("small", seeds=[1, 1]), "seeds"),
        (lambda: study.lm_config("small", learning_rate=0), "learning_rate"),
        (lambda: study.lm_config("small", d_model=10, n_heads=4), "n_heads"),
        (lambda: study.lm_config("small", slices=30), "slices"),
        (lambda: study.lm_config("small", width=3), "width"),
        (lambda: spikes.count_spikes([1.0], window=0), "window"),
        (lambda: spikes.count_spikes([1.0], factor=-1), "factor"),
        (lambda: triangle_nodes(0), "resolution"),
        (
            lambda: measures.context_slice_map(_tiny_model(), torch.zeros(2, 6, dtype=torch.long)),
            "tokens",
        ),
        (lambda: study.run_measure({}, "loss", 1), "measure"),
    ],
)
def test_bad_arguments_are_named(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_a_corpus_with_another_fingerprint_is_refused(monkeypatch):
    config = study.lm_config("small", **TINY)
    other = Corpus(config["sympy_version"], ("a.py",), ("Sum.\n\n",))
    monkeypatch.setattr(study, "sympy_docstring_corpus", lambda: other)
    wrong = {**config, "corpus_text_sha256": "0" * 64, "variant": "ungated", "seed": 0}
    with pytest.raises(ValueError, match="corpus: the file list differs"):
        study.measure_lm_cell(wrong)
    assert isinstance(study.fingerprint(config), CorpusFingerprint)


def test_claims_refuse_a_measure_that_is_not_finite():
    runs = [
        {"variant": v, "seed": s, "bits_per_character": None if s == 0 else 1.0 + s}
        for v in ("ungated", "gated_elementwise")
        for s in (0, 1)
    ]
    with pytest.raises(ValueError, match="bits_per_character"):
        study.lm_claims(runs, 1, positions=8)
