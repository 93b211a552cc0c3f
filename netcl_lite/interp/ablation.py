"""Ablations: take a component out of the forward pass and see what the
model loses. Each function returns hooks for ``model.run_with_hooks``.

- ``zero_ablation``: the component's output becomes 0. Simple, but it
  moves the stream somewhere the later layers never saw in training, so
  it can cost more than the component was worth.
- ``mean_ablation``: the output becomes its mean over a reference batch
  (per position with ``per_position=True``): the component still adds its
  average, only the information it carries about this input is gone.
- ``resample_ablation``: the output becomes the same component's output on
  another input (a row of a source batch drawn at random): what the model
  would have written for a different text.

The components: ``heads`` is a list of (layer, h) pairs (head h's output
before W_O, ``blocks.{l}.attn.z``), ``layers`` a list of layers (all a
block writes to the stream: its ``attn_out`` and, with an MLP, its
``mlp_out``). ``positions`` restricts the ablation: None (all), an int, a
range or list of positions, or a boolean mask (S,) or (B, S).

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=2, n_heads=2, n_kv_heads=2,
...     attn_only=True))
>>> ids = np.random.default_rng(0).integers(0, 20, (4, 6)).astype(np.int32)
>>> hooks = zero_ablation(model, heads=[(1, 0)])
>>> zeroed = model.run_with_hooks(ids, hooks)
>>> masked = model(ids, head_mask={1: [0.0, 1.0]}).value.to_host()
>>> bool(np.allclose(zeroed, masked, atol=1e-5))
True
>>> mean = mean_ablation(model, ids, heads=[(1, 0)], positions=range(2, 6))
>>> model.run_with_hooks(ids, mean).shape
(4, 6, 20)
>>> zero_ablation(model, heads=[(1, 2)])
Traceback (most recent call last):
...
ValueError: heads: head 2 in (1, 2) is not a head of layer 1 (0..1)
"""

import numpy as np

from netcl_lite.interp.checks import (check_head, check_layer, check_positions,
                                      position_mask)


def _targets(model, heads, layers):
    """{activation name: [the head indices to replace, or None: all of it]}."""
    targets = {}
    for layer, h in (check_head(model, head, "heads") for head in heads):
        targets.setdefault(f"blocks.{layer}.attn.z", []).append(h)
    for layer in (check_layer(model, layer, "layers") for layer in layers):
        targets[f"blocks.{layer}.attn_out"] = None
        if model.blocks[layer].ffn is not None:
            targets[f"blocks.{layer}.mlp_out"] = None
    if not targets:
        raise ValueError("ablation: name at least one head or layer")
    return targets


def _hooks(model, heads, layers, positions, values):
    """One hook per activation: at the chosen positions, the chosen heads
    (or the whole activation) become ``values(name, array)``'s array."""
    positions = check_positions(positions, model.config.max_seq_len, "positions")
    targets = _targets(model, heads, layers)

    def make(name, index):
        def hook(act):                            # (B, S, ...) as the model made it
            B, S = act.shape[:2]
            where = position_mask(positions, B, S, "positions")      # (B, S)
            new = values(name, act)                                  # like act
            if index is None:
                act[where] = new[where]
            else:
                for h in index:                   # (B, S, H, hd): head h only
                    act[:, :, h][where] = new[:, :, h][where]
            return act
        return hook

    return {name: make(name, index) for name, index in targets.items()}


def zero_ablation(model, heads=(), layers=(), positions=None):
    """Hooks that set the components' outputs to 0."""
    return _hooks(model, heads, layers, positions,
                  lambda name, act: np.zeros_like(act))


def mean_ablation(model, reference, heads=(), layers=(), positions=None,
                  per_position=False):
    """Hooks that set the components' outputs to their mean over the
    reference ids (B_ref, S_ref): over rows and positions, or over rows
    only with ``per_position`` (the run's S must then equal S_ref)."""
    names = list(_targets(model, heads, layers))
    check_positions(positions, model.config.max_seq_len, "positions")
    _, cache = model.run_with_cache(reference, names)
    means = {name: act.mean(axis=0 if per_position else (0, 1))   # (S, ...) or (...)
             for name, act in cache.items()}

    def values(name, act):
        if per_position and act.shape[1] != means[name].shape[0]:
            raise ValueError(f"mean_ablation: per-position means of "
                             f"{means[name].shape[0]} positions, but the run "
                             f"has S = {act.shape[1]}")
        return np.broadcast_to(means[name], act.shape)
    return _hooks(model, heads, layers, positions, values)


def resample_ablation(model, source, heads=(), layers=(), positions=None,
                      seed=0):
    """Hooks that set the components' outputs, row by row, to their
    outputs on a row of the source ids drawn at random (with replacement,
    seeded), at the same positions; source has the run's S."""
    names = list(_targets(model, heads, layers))
    check_positions(positions, model.config.max_seq_len, "positions")
    _, cache = model.run_with_cache(source, names)

    def values(name, act):
        src = cache[name]                                   # (B_src, S_src, ...)
        if src.shape[1:] != act.shape[1:]:
            raise ValueError(f"resample_ablation: the source gives {name} of "
                             f"shape {src.shape[1:]} per row, the run "
                             f"{act.shape[1:]} (same S needed)")
        # the same source rows for every activation and every run of B rows
        rows = np.random.default_rng(seed).integers(0, len(src), size=len(act))
        return src[rows]
    return _hooks(model, heads, layers, positions, values)
