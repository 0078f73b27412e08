"""The gated attention read-out of one point, as a pure torch map: the map curvature is taken of.

    y = W_o (g(x) ⊙ Σ_i softmax(β K W_q x)_i V_i),   g = σ(W_g x + b_g) (or g = 1)

with fixed keys K (n, m) and values V (n, e): the G1 gate position of
:class:`curvlab.models.attention.GatedSelfAttention`, written for a single point x (k,) so that
``torch.func`` (vmap, jacfwd) and :mod:`curvlab.curvature` can differentiate it.

- :data:`GATES`  the gates: ``"elementwise"`` (one per channel), ``"headwise"`` (one per head),
  ``"none"``.
- :func:`gated_attention_point_map`  the map; every argument is checked, each error naming it.
"""

from __future__ import annotations

import torch

from curvlab import arguments

__all__ = ["GATES", "gated_attention_point_map"]


GATES: tuple[str, ...] = ("elementwise", "headwise", "none")
"""The gate of :func:`gated_attention_point_map`: one per channel, one per head, or none."""


def gated_attention_point_map(
    x: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    *,
    query_weight: torch.Tensor | None = None,
    gate: str = "elementwise",
    gate_weight: torch.Tensor | None = None,
    gate_bias: torch.Tensor | float | None = None,
    output_weight: torch.Tensor | None = None,
    beta: float = 1.0,
) -> torch.Tensor:
    """One gated attention read-out of one point: x (k,) -> y (d,), the map curvature is taken of.

    y = W_o (g(x) ⊙ Σ_i softmax(β K W_q x)_i V_i), with fixed keys K (n, m), values V (n, e),
    query weight W_q (m, k; None: the identity, m = k), output weight W_o (d, e; None: the
    identity, d = e), and the gate g = σ(W_g x + b_g) placed after the attention and before W_o
    (the G1 position of :class:`curvlab.models.attention.GatedSelfAttention`):

    - ``gate="elementwise"``: W_g (e, k), b_g (e,), one gate per channel;
    - ``gate="headwise"``: W_g (h, k) (or (k,) for one head), b_g (h,) (or a number); the e
      channels are h equal consecutive heads, each scaled by its own σ;
    - ``gate="none"``: g = 1 (the ungated read-out; ``gate_weight`` must be None).

    ``gate_bias`` None means b_g = 0.  Pure torch, so it runs under ``torch.func.vmap`` and
    ``jacfwd``; bind the parameters with :func:`functools.partial` to get a map ``f(x)`` for
    :mod:`curvlab.curvature`.  Parameters are cast to x's dtype and device.

    >>> import functools
    >>> keys, values = torch.eye(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64)
    >>> f = functools.partial(gated_attention_point_map, keys=keys, values=values, gate="none")
    >>> f(torch.zeros(2, dtype=torch.float64)).tolist()   # equal weights: the centroid
    [0.5, 0.5]
    >>> g = functools.partial(gated_attention_point_map, keys=keys, values=values,
    ...                       gate="headwise", gate_weight=torch.ones(2, dtype=torch.float64))
    >>> g(torch.zeros(2, dtype=torch.float64)).tolist()   # σ(0) = 1/2 times the centroid
    [0.25, 0.25]
    """
    if not isinstance(x, torch.Tensor) or x.ndim != 1:
        raise ValueError(f"x: expected one point, a tensor of shape (k,), got {_shape_of(x)}")
    k = x.shape[0]
    keys, values = _as_like("keys", keys, x, 2), _as_like("values", values, x, 2)
    if keys.shape[0] != values.shape[0]:
        raise ValueError(
            f"keys, values: expected one value per key, got {keys.shape[0]} keys and "
            f"{values.shape[0]} values"
        )
    query = x
    if query_weight is not None:
        query_weight = _as_like("query_weight", query_weight, x, 2)
        if query_weight.shape != (keys.shape[1], k):
            raise ValueError(
                f"query_weight: expected shape ({keys.shape[1]}, {k}) (key width, input "
                f"dimension), got {tuple(query_weight.shape)}"
            )
        query = query_weight @ x
    elif keys.shape[1] != k:
        raise ValueError(
            f"keys: without query_weight the keys must have width k = {k}, got shape "
            f"{tuple(keys.shape)}"
        )
    read = torch.softmax(beta * (keys @ query), dim=-1) @ values  # (e,)
    gated = read * _gate_values(gate, gate_weight, gate_bias, x, read.shape[0])
    if output_weight is None:
        return gated
    output_weight = _as_like("output_weight", output_weight, x, 2)
    if output_weight.shape[1] != read.shape[0]:
        raise ValueError(
            f"output_weight: expected shape (d, {read.shape[0]}) (e = value width), got "
            f"{tuple(output_weight.shape)}"
        )
    return output_weight @ gated


def _shape_of(value) -> str:
    return str(tuple(value.shape)) if isinstance(value, torch.Tensor) else type(value).__name__


def _as_like(name: str, value, x: torch.Tensor, ndim: int) -> torch.Tensor:
    if not isinstance(value, torch.Tensor) or value.ndim != ndim:
        raise ValueError(
            f"{name}: expected a tensor with {ndim} dimensions, got {_shape_of(value)}"
        )
    return value.to(x)


def _gate_values(gate: str, weight, bias, x: torch.Tensor, channels: int):
    """σ(W_g x + b_g) broadcast to the e channels (shape (e,)), or 1.0 for ``gate="none"``."""
    arguments.one_of("gate", gate, GATES)
    if gate == "none":
        for name, value in (("gate_weight", weight), ("gate_bias", bias)):
            if value is not None:
                raise ValueError(f'{name}: must be None with gate="none", got {value!r}')
        return 1.0
    if weight is None:
        raise ValueError(f'gate_weight: required with gate="{gate}"')
    k = x.shape[0]
    weight = weight.to(x) if isinstance(weight, torch.Tensor) else weight
    if gate == "headwise" and isinstance(weight, torch.Tensor) and weight.ndim == 1:
        weight = weight.unsqueeze(0)  # one head
    weight = _as_like("gate_weight", weight, x, 2)
    heads = weight.shape[0]
    expected = channels if gate == "elementwise" else heads
    if weight.shape[1] != k or (gate == "elementwise" and heads != channels):
        raise ValueError(
            f"gate_weight: expected shape ({'e' if gate == 'elementwise' else 'h'}, {k}) with "
            f"e = {channels} value channels, got {tuple(weight.shape)}"
        )
    if gate == "headwise" and channels % heads != 0:
        raise ValueError(
            f"gate_weight: {heads} heads do not divide the {channels} value channels evenly"
        )
    pre = weight @ x  # (h,) or (e,)
    if bias is not None:
        bias = torch.as_tensor(bias).to(x)
        if bias.shape not in ((), (expected,)):
            raise ValueError(
                f"gate_bias: expected a number or shape ({expected},), got {tuple(bias.shape)}"
            )
        pre = pre + bias
    gate_values = torch.sigmoid(pre)
    if gate == "headwise":
        gate_values = gate_values.repeat_interleave(channels // heads)
    return gate_values
