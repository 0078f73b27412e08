"""Training of the language model (:mod:`curvlab.models.language_model`), seeded.

AdamW (betas 0.9, 0.95), a linear warm-up over ``warmup_steps``, then cosine decay to a tenth
of the rate; batches of ``batch_size`` windows of ``context + 1`` characters at random offsets
of the training split, drawn from the seed (so every variant of a seed sees the same batches).
No gradient clipping (it would hide the loss spikes a stability measure counts).
"""

from __future__ import annotations

import math

import torch

from curvlab.models.language_model import (
    TransformerLanguageModel,
    build_language_model,
    next_token_loss,
)

__all__ = ["learning_rate_at", "train_language_model"]


def learning_rate_at(step: int, config: dict, peak: float) -> float:
    """The learning rate at ``step``: linear warm-up to ``peak`` over the config's
    ``warmup_steps``, then cosine decay to a tenth of it at ``steps``.

    >>> config = {"warmup_steps": 2, "steps": 4}
    >>> [round(learning_rate_at(t, config, 1.0), 3) for t in range(4)]
    [0.5, 1.0, 1.0, 0.55]
    """
    warmup, steps = config["warmup_steps"], config["steps"]
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(steps - warmup, 1)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train_language_model(
    config: dict, variant: str, seed: int, train_ids: torch.Tensor, vocab_size: int, *, multiple=1
) -> tuple[TransformerLanguageModel, list[float | None]]:
    """Train ``variant`` from ``seed`` at ``multiple`` × the learning rate (module docstring),
    the model's sizes and the schedule from ``config`` (a language-model study configuration,
    with its ``device``); the model and each step's training loss (None where not finite;
    training stops at the first such step)."""
    device = config.get("device", "cpu")
    model = build_language_model(
        variant,
        vocab_size=vocab_size,
        context=config["context"],
        d_model=config["d_model"],
        n_heads=config["n_heads"],
        depth=config["depth"],
        seed=seed,
    ).to(device)
    peak = config["learning_rate"] * multiple
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=peak, betas=(0.9, 0.95), weight_decay=config["weight_decay"]
    )
    generator = torch.Generator().manual_seed(seed)
    width = config["context"] + 1
    span = train_ids.numel() - width
    losses: list[float | None] = []
    for step in range(config["steps"]):
        offsets = torch.randint(span + 1, (config["batch_size"],), generator=generator)
        batch = torch.stack([train_ids[o : o + width] for o in offsets.tolist()]).to(device)
        for group in optimiser.param_groups:
            group["lr"] = learning_rate_at(step, config, peak)
        loss = next_token_loss(model, batch)
        if not torch.isfinite(loss):
            losses.append(None)
            break
        losses.append(loss.item())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return model.eval(), losses
