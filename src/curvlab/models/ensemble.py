"""Training many classifiers of one shape at once: a vectorised ensemble over a member axis.

E classifiers built by :func:`curvlab.models.attention.build_classifier` with the same variant and
widths (any seeds, any tasks: each member has its own data, points (n, 2) or token sequences
(n, T, w) as the classifier reads) are stacked along a leading member axis with
``torch.func.stack_module_state``: every parameter becomes one tensor (E, ...).  The E logits
come from those stacked tensors by one of two forward passes:

- ``backend="vmap"`` (default, and the only one used to measure): ``torch.func.vmap`` of
  ``torch.func.functional_call`` of the ``nn.Module`` itself (one member, the template);
- ``backend="einsum"`` (opt-in, for training only): the classifier written out by hand with
  batched matmuls over the member axis e, e.g. Q K V = einsum("ebtd,eod->ebto", h, W_qkv) +
  b_qkv; a test keeps its losses and weights equal to the vmap pass's in float64.

Training (:func:`train_ensemble`): full-batch Adam on L = Σ_e ℓ_e, ℓ_e the mean binary
cross-entropy of member e on its own data.  ∂L/∂θ_e = ∂ℓ_e/∂θ_e and Adam acts elementwise,
so every member follows exactly the trajectory it would follow alone (:func:`train_loop` is
that per-member loop with :func:`curvlab.models.training.fit`; the test suite checks the two agree).
Every epoch's training loss and accuracy are recorded (the curves), with the loss plateau of
:func:`plateau` beside them; whether a run of the study converged is judged on accuracy and
the curvature measures by :mod:`curvlab.models.convergence`, not by the loss.

Measurement always runs the module: :func:`evaluate_ensemble`, the final loss and accuracy of
:func:`train_ensemble`, :func:`ensemble_representation` and :func:`ensemble_jets` (the first and
second input derivatives of every member's pooled representation, by the Gauss-equation
engine's :func:`curvlab.geometry.gauss_equation.row_jets` under ``vmap`` over the members), from
which :mod:`curvlab.measurement.sheets` computes curvature.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from curvlab import arguments
from curvlab.geometry.gauss_equation import row_jets
from curvlab.models.attention import (
    AdditiveSelfAttention,
    AttentionBlock,
    AttentionClassifier,
    GatedSelfAttention,
)
from curvlab.models.training import fit

__all__ = [
    "BACKENDS",
    "SCHEDULES",
    "Ensemble",
    "ensemble_jets",
    "ensemble_logits",
    "ensemble_representation",
    "plateau",
    "stack",
    "train_ensemble",
    "train_loop",
]

BACKENDS: tuple[str, ...] = ("vmap", "einsum")
"""The two vectorised forward passes (module docstring): "vmap", the module itself (default,
and the only one used to measure), and "einsum", the hand-batched training optimisation."""

SCHEDULES: tuple[str, ...] = ("constant", "cosine")
"""Learning-rate schedules of :func:`train_ensemble`."""

PLATEAU_WINDOW = 0.2
"""The plateau criterion looks at the last 20% of the epochs ..."""

PLATEAU_TOLERANCE = 0.01
"""... and calls a run converged when its loss fell by less than 1% (relative) over them,
or when the loss is below :data:`LOSS_FLOOR` (the data are fitted)."""

LOSS_FLOOR = 1e-3


def plateau(curve: Sequence[float], *, window=PLATEAU_WINDOW, tolerance=PLATEAU_TOLERANCE):
    """The plateau criterion of one loss curve: (converged, relative change over the window).

    change = (L[t₀] − L[end]) / L[t₀], t₀ the start of the last ``window`` share of the epochs;
    converged when change < ``tolerance`` or L[end] < LOSS_FLOOR.

    >>> converged, change = plateau([1.0, 0.5, 0.4, 0.399, 0.3985])
    >>> converged, round(change, 6)
    (True, 0.001253)
    >>> plateau([1.0, 0.8, 0.6, 0.4, 0.2])[0]
    False
    """
    curve = [float(v) for v in curve]
    if len(curve) < 2 or not all(math.isfinite(v) for v in curve):
        raise ValueError("curve: expected at least 2 finite loss values")
    start = curve[max(0, len(curve) - 1 - max(1, round(window * len(curve))))]
    change = (start - curve[-1]) / start if start > 0 else 0.0
    return bool(change < tolerance or curve[-1] < LOSS_FLOOR), change


class Ensemble:
    """E classifiers of one shape as stacked tensors: ``params`` and ``buffers`` dicts of
    (E, ...) tensors, the ``template`` module (one member, for names and shapes), and its
    description (variant, depth, heads, pooling)."""

    def __init__(self, models: Sequence[AttentionClassifier]):
        models = list(models)
        if not models or not all(isinstance(m, AttentionClassifier) for m in models):
            raise TypeError("models: expected a nonempty list of AttentionClassifier")
        names = [tuple((n, p.shape) for n, p in m.named_parameters()) for m in models]
        if any(n != names[0] for n in names):
            raise ValueError("models: an ensemble needs models of one shape (same variant)")
        template = models[0]
        self.template = template
        self.kind = _einsum_kind(template)
        params, buffers = stack_module_state(models)
        self.params = {k: v.detach().clone() for k, v in params.items()}
        self.buffers = {k: v.detach().clone() for k, v in buffers.items()}
        self.size = len(models)

    def to(self, device=None, dtype=None) -> Ensemble:
        """Move (and cast floating tensors of) the stacked state in place; returns self."""
        for store in (self.params, self.buffers):
            for key, value in store.items():
                store[key] = value.to(device=device, dtype=dtype)
        return self

    def with_params(self, params: dict) -> Ensemble:
        """A shallow copy of this ensemble with the stacked parameters ``params`` (a snapshot)."""
        import copy

        other = copy.copy(self)
        other.params = dict(params)
        return other

    def select(self, indices: Sequence[int]) -> Ensemble:
        """A shallow copy holding only the members ``indices`` (in that order)."""
        index = torch.as_tensor(list(indices), dtype=torch.long)
        if index.numel() == 0 or int(index.min()) < 0 or int(index.max()) >= self.size:
            raise ValueError(f"indices: expected member indices in [0, {self.size}), got {indices}")
        other = self.with_params({k: v[index.to(v.device)] for k, v in self.params.items()})
        other.buffers = {k: v[index.to(v.device)] for k, v in self.buffers.items()}
        other.size = int(index.numel())
        return other

    def member(self, index: int) -> AttentionClassifier:
        """Member ``index`` as an ordinary module (a copy of the template with its weights)."""
        import copy

        model = copy.deepcopy(self.template)
        state = {k: v[index] for k, v in {**self.params, **self.buffers}.items()}
        model.load_state_dict(state)
        return model


def stack(models: Sequence[AttentionClassifier]) -> Ensemble:
    """Stack classifiers of one shape into an :class:`Ensemble`."""
    return Ensemble(models)


def _einsum_kind(template: AttentionClassifier) -> str | None:
    """The attention kind the einsum pass writes out, or None when it cannot (read/write
    blocks, mixed kinds)."""
    if not all(isinstance(block, AttentionBlock) for block in template.blocks):
        return None
    if len({type(block.attention) for block in template.blocks}) != 1:
        return None
    attention = template.blocks[0].attention
    if isinstance(attention, GatedSelfAttention):
        return "gated_" + attention.gate_kind
    if isinstance(attention, AdditiveSelfAttention):
        return "additive_" + attention.nonlinearity
    return "ungated"


class _Pooled(nn.Module):
    """A classifier's pooled representation as a module's forward, for ``functional_call``."""

    def __init__(self, model: AttentionClassifier):
        super().__init__()
        self.model = model

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        return self.model.representation(points)


def _pooled_state(ens: Ensemble, params: dict, dtype=None) -> tuple[dict, dict]:
    """The stacked (params, buffers) under :class:`_Pooled`'s names, optionally cast."""

    def named(store):
        return {"model." + k: v if dtype is None else v.to(dtype) for k, v in store.items()}

    return named(params), named(ens.buffers)


def ensemble_representation(ens: Ensemble, points: torch.Tensor, params=None) -> torch.Tensor:
    """Pooled representations (E, B, d) of member e at its points ``points[e]`` (E, B, 2):
    the module's :meth:`~curvlab.models.attention.AttentionClassifier.representation` under
    ``vmap(functional_call)``."""
    params = ens.params if params is None else params
    pooled = _Pooled(ens.template)

    def one(p, b, x):
        return functional_call(pooled, (p, b), (x,))

    return vmap(one)(*_pooled_state(ens, params), points)


def ensemble_logits(
    ens: Ensemble, points: torch.Tensor, params=None, *, backend: str = "vmap"
) -> torch.Tensor:
    """Logits (E, B) of every member at its own points (E, B, 2), by the module under
    ``vmap(functional_call)`` (or, ``backend="einsum"``, the hand-batched training pass)."""
    params = ens.params if params is None else params
    if backend == "vmap":

        def one(p, b, x):
            return functional_call(ens.template, (p, b), (x,))

        return vmap(one)(params, ens.buffers, points)
    if backend == "einsum":
        return _einsum_logits(ens, points, params)
    raise ValueError(f"backend: expected one of {BACKENDS}, got {backend!r}")


# ---------------------------------------------------------------------------------------------
# the hand-batched training optimisation (backend="einsum"), never used to measure


def _heads(t: torch.Tensor, n_heads: int) -> torch.Tensor:
    E, B, T, w = t.shape
    return t.reshape(E, B, T, n_heads, w // n_heads).transpose(2, 3)  # (E, B, nh, T, hs)


def _linear(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """einsum("ebti,eoi->ebto", h, weight) + bias, as one batched matmul over e (faster)."""
    E, B, T, i = h.shape
    flat = torch.baddbmm(bias[:, None, :], h.reshape(E, B * T, i), weight.transpose(1, 2))
    return flat.reshape(E, B, T, -1)


def _block(ens: Ensemble, params: dict, index: int, h: torch.Tensor) -> torch.Tensor:
    block = ens.template.blocks[index]
    attention = block.attention
    prefix = f"blocks.{index}."
    x = h
    if isinstance(block.norm, nn.LayerNorm):
        x = nn.functional.layer_norm(h, h.shape[-1:], eps=block.norm.eps)
        x = (
            x * params[prefix + "norm.weight"][:, None, None]
            + params[prefix + "norm.bias"][:, None, None]
        )
    a = prefix + "attention."
    qkv = _linear(x, params[a + "query_key_value.weight"], params[a + "query_key_value.bias"])
    w, nh = attention.d_model, attention.n_heads
    q, k, v = (_heads(t, nh) for t in qkv.split(w, dim=-1))  # (E, B, nh, T, hs)
    scores = q @ k.transpose(-2, -1) / math.sqrt(attention.head_size)  # (E, B, nh, T, T)
    y = torch.softmax(scores, dim=-1) @ v  # (E, B, nh, T, hs)
    if ens.kind.startswith("gated"):
        gate = _linear(x, params[a + "gate.weight"], params[a + "gate.bias"])
        if ens.kind == "gated_headwise":
            y = y * torch.sigmoid(gate).transpose(2, 3).unsqueeze(-1)  # (E, B, nh, T, 1)
        else:
            y = y * torch.sigmoid(_heads(gate, nh))
    elif ens.kind.startswith("additive"):
        shift = _heads(_linear(x, params[a + "shift.weight"], params[a + "shift.bias"]), nh)
        y = y + (torch.tanh(shift) if ens.kind == "additive_tanh" else shift)
    E, B, _, T, _ = y.shape
    y = y.transpose(2, 3).reshape(E, B, T, w)
    update = _linear(y, params[a + "output.weight"], params[a + "output.bias"])
    return h + update if block.residual else update


def _tokens(ens: Ensemble, points: torch.Tensor) -> torch.Tensor:
    buffers = ens.buffers
    projections = buffers["tokenizer.projections"].to(points.dtype)  # (E, T, d, k)
    if points.ndim == 3:  # points (E, B, 2): every token reads the point
        tokens = torch.einsum("etdk,ebk->ebtd", projections, points)
    else:  # sequences (E, B, T, w): token t reads x_t
        tokens = torch.einsum("etdk,ebtk->ebtd", projections, points)
    tokens = tokens + buffers["tokenizer.offsets"].to(points.dtype)[:, None]
    E, B = points.shape[:2]
    cls = buffers["tokenizer.cls"].to(points.dtype)[:, None, None, :].expand(E, B, 1, -1)
    return torch.cat([cls, tokens], dim=2)  # (E, B, T + 1, d)


def _einsum_logits(ens: Ensemble, points: torch.Tensor, params: dict) -> torch.Tensor:
    if ens.kind is None:
        raise ValueError(
            "backend: the einsum pass writes out plain attention blocks of one kind only; "
            "use backend='vmap' for this model"
        )
    h = _tokens(ens, points)
    for index in range(len(ens.template.blocks)):
        h = _block(ens, params, index, h)
    pooled = h.mean(dim=2) if ens.template.pooling == "mean" else h[:, :, 0]  # (E, B, d)
    weight, bias = params["readout.weight"], params["readout.bias"]  # (E, 1, d), (E, 1)
    return torch.einsum("ebd,ed->eb", pooled, weight[:, 0]) + bias


# ---------------------------------------------------------------------------------------------
# training and measurement


def _check_data(ens: Ensemble, points, labels) -> None:
    input_shape = ens.template.tokenizer.input_shape  # (2,) points, (T, w) sequences
    if not isinstance(points, torch.Tensor) or tuple(points.shape[2:]) != input_shape:
        expected = ", ".join(["E", "n", *map(str, input_shape)])
        raise ValueError(f"points: expected a tensor ({expected})")
    if points.shape[0] != ens.size:
        raise ValueError(f"points: expected {ens.size} members, got {points.shape[0]}")
    if not isinstance(labels, torch.Tensor) or labels.shape != points.shape[:2]:
        raise ValueError(f"labels: expected shape {tuple(points.shape[:2])}")


def train_ensemble(
    ens: Ensemble,
    points: torch.Tensor,
    labels: torch.Tensor,
    *,
    epochs: int,
    learning_rate: float,
    weight_decay: float = 0.0,
    backend: str = "vmap",
    progress=None,
    snapshots: Sequence[int] = (),
    schedule: str = "constant",
) -> dict:
    """Train every member on its own full batch with Adam for ``epochs`` epochs, in place.

    ``points`` (E, n, 2), or (E, n, T, w) token sequences for a classifier built with
    ``token_width=w``; ``labels`` (E, n) in {0, 1}.  Returns ``loss_curve`` and
    ``accuracy_curve`` (E, epochs) (training loss and accuracy before each step), the final
    ``train_loss`` and ``train_accuracy`` (E,), ``converged`` (E,) bools by the loss plateau
    of :func:`plateau`, ``plateau_change``, ``seconds`` and ``snapshots``: for each epoch t of
    ``snapshots`` (0 <= t <= epochs) a copy of the stacked parameters after t steps.
    ``schedule``: "constant" (the learning rate throughout) or "cosine" (step t uses
    learning_rate · (1 + cos(π t / epochs)) / 2, annealed towards 0 at the end).
    ``progress``: an optional callable called with the number of epochs done since the last
    call (a tqdm bar's ``update``).  ``backend``: the forward pass of the training steps,
    "vmap" (the module) or "einsum" (the hand-batched optimisation); the final loss and
    accuracy are measured by the module either way.
    """
    arguments.one_of("schedule", schedule, SCHEDULES)
    arguments.one_of("backend", backend, BACKENDS)
    _check_data(ens, points, labels)
    arguments.integer("epochs", epochs, 2)
    wanted = set(snapshots)
    if any(not arguments.is_integer(t) or not 0 <= t <= epochs for t in wanted):
        raise ValueError(f"snapshots: expected epochs in 0..{epochs}, got {sorted(wanted)!r}")
    kept = {}
    dtype = next(iter(ens.params.values())).dtype
    points, labels = points.to(dtype), labels.to(dtype)
    params = {k: v.detach().clone().requires_grad_(True) for k, v in ens.params.items()}
    optimiser = torch.optim.Adam(list(params.values()), lr=learning_rate, weight_decay=weight_decay)
    scheduler = None
    if schedule == "cosine":
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda t: 0.5 * (1 + math.cos(math.pi * t / epochs))
        )
    curve = torch.empty(ens.size, epochs, dtype=torch.float64)
    accuracy_curve = torch.empty(ens.size, epochs, dtype=torch.float64)
    start = time.perf_counter()
    for epoch in range(epochs):
        if epoch in wanted:
            kept[epoch] = {k: v.detach().clone() for k, v in params.items()}
        logits = ensemble_logits(ens, points, params, backend=backend)  # (E, n)
        losses = nn.functional.binary_cross_entropy_with_logits(
            logits, labels, reduction="none"
        ).mean(dim=1)  # (E,)
        curve[:, epoch] = losses.detach().to(torch.float64).cpu()
        hits = (logits.detach() > 0).to(dtype) == labels
        accuracy_curve[:, epoch] = hits.to(torch.float64).mean(dim=1).cpu()
        optimiser.zero_grad(set_to_none=True)
        losses.sum().backward()
        optimiser.step()
        if scheduler is not None:
            scheduler.step()
        if progress is not None and (epoch + 1) % 50 == 0:
            progress(50)
    if progress is not None:
        progress(epochs % 50)
    ens.params = {k: v.detach() for k, v in params.items()}
    if epochs in wanted:
        kept[epochs] = {k: v.clone() for k, v in ens.params.items()}
    with torch.no_grad():
        logits = ensemble_logits(ens, points)  # measured by the module, whatever trained it
        final = nn.functional.binary_cross_entropy_with_logits(
            logits, labels, reduction="none"
        ).mean(dim=1)
        accuracy = ((logits > 0).to(dtype) == labels).to(torch.float64).mean(dim=1)
    if not torch.isfinite(final).all():
        raise ValueError("learning_rate: training diverged (non-finite loss); try a smaller value")
    judged = [plateau(row.tolist()) for row in curve]
    return {
        "loss_curve": curve,
        "accuracy_curve": accuracy_curve,
        "train_loss": final.to(torch.float64).cpu(),
        "train_accuracy": accuracy.cpu(),
        "converged": [c for c, _ in judged],
        "plateau_change": [change for _, change in judged],
        "seconds": time.perf_counter() - start,
        "snapshots": kept,
    }


def evaluate_ensemble(ens: Ensemble, points: torch.Tensor, labels: torch.Tensor) -> dict:
    """Test accuracy and loss (E,) of every member on its own points (E, n, 2)."""
    _check_data(ens, points, labels)
    dtype = next(iter(ens.params.values())).dtype
    points, labels = points.to(dtype), labels.to(dtype)
    with torch.no_grad():
        logits = ensemble_logits(ens, points)
        loss = nn.functional.binary_cross_entropy_with_logits(
            logits, labels, reduction="none"
        ).mean(dim=1)
        accuracy = ((logits > 0).to(dtype) == labels).to(torch.float64).mean(dim=1)
    return {"accuracy": accuracy.cpu(), "loss": loss.to(torch.float64).cpu()}


def train_loop(models, points, labels, *, epochs: int, learning_rate: float, device=None):
    """The reference: each model trained alone by :func:`~curvlab.models.training.fit`
    (full batch)."""
    records = []
    for model, x, y in zip(models, points, labels, strict=True):
        records.append(fit(model, x, y, epochs=epochs, learning_rate=learning_rate, device=device))
    return records


JET_POINTS = 40960
"""Points (members × points per member) in one call of :func:`ensemble_jets`' vmapped jets.
A call costs a fixed dispatch time (about 60 ms on one CPU thread for the study's classifier)
on top of its points, so a call should carry many points; but all nodes of 320 members at
once overflow the caches (at 32² nodes, chunks of 128 points per member ran 3.4× faster than
all nodes at once on 2 CPU cores).  So each call carries about this many points: 128 per
member for 320 members, all of one member's up to 40960."""


def ensemble_jets(
    ens: Ensemble, points: torch.Tensor, *, chunk: int | None | str = "auto"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Jacobian J (E, N, d, 2) and Hessian H (E, N, d, 2, 2) of every member's pooled
    representation x ↦ r_e(x) at its points (E, N, 2), in the points' dtype.

    r_e is the module's representation under ``functional_call`` with member e's weights; its
    jets are the Gauss-equation engine's (:func:`curvlab.geometry.gauss_equation.row_jets`,
    forward mode on the module's own batch of points: a point's tokens attend to each other
    only, so its row depends on it alone), under ``vmap`` over the members, ``chunk`` points
    per member at a time
    ("auto": :data:`JET_POINTS` // E, at least 1; None: all at once; the values depend on it
    only through round-off).
    """
    if chunk == "auto":
        chunk = max(1, JET_POINTS // ens.size)
    if chunk is not None:
        arguments.integer("chunk", chunk, 1, expected="a positive integer, None or 'auto'")
    points = points.detach()
    params = {k: v.detach() for k, v in ens.params.items()}
    pooled = _Pooled(ens.template)
    state = _pooled_state(ens, params, points.dtype)

    def member(p, b, x):
        def represent(rows):
            return functional_call(pooled, (p, b), (rows,))  # (M, d): each row its own point

        return row_jets(represent, x)

    step = points.shape[1] if chunk is None else chunk
    parts = [vmap(member)(*state, points[:, i : i + step]) for i in range(0, points.shape[1], step)]
    if len(parts) == 1:
        return parts[0]
    return torch.cat([J for J, _ in parts], dim=1), torch.cat([H for _, H in parts], dim=1)
