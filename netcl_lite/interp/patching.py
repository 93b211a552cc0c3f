"""Activation patching and attribution patching: which activations carry
the difference between a clean input and a corrupted one?

Activation patching runs the corrupted input once per component and
position, each time with that one activation copied in from the clean
run, and scores the logits with ``metric``. A component whose clean value
restores the clean score carries what the corruption destroyed.

Attribution patching estimates every one of those runs at once, to
first order: the score moves by about (clean - corrupted) . d metric /
d activation, with the gradient taken on the corrupted run. One forward
and one backward pass (``model.activation_grads``) instead of one forward
per patch. It is exact when the metric is linear in the activation, and
only an estimate otherwise (the chapter compares the two).

``what`` chooses the activations and the result's layout:

    "heads"       blocks.{l}.attn.z, one head at a time    (L, H, S) or (L, H)
    "pattern"     blocks.{l}.attn.pattern, one head's rows (L, H, S) or (L, H)
    "resid_pre", "attn_out", "mlp_out", "resid_post"       (L, S)    or (L,)
    "ln_final.input", "ln_final.scale"                     (1, S)    or (1,)

With ``per_position`` each position s is patched alone (the last axis);
without, the whole sequence at once. ``positions`` limits the positions
swept (a list; the last axis then follows it). A pattern's position is
its query row.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> from netcl_lite.interp import LogitMetric
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=2, n_heads=2, n_kv_heads=2,
...     attn_only=True))
>>> clean = np.array([[3, 4, 5, 3, 4]], np.int32)
>>> corrupted = np.array([[7, 8, 5, 3, 4]], np.int32)
>>> metric = LogitMetric.target_logit([[0, 0, 0, 0, 5]],
...                                   [[False] * 4 + [True]], 20)
>>> patched = activation_patching(model, clean, corrupted, metric, "heads")
>>> patched.shape                                           # (L, H, S)
(2, 2, 5)
>>> estimate = attribution_patching(model, clean, corrupted, metric, "heads")
>>> estimate.shape
(2, 2, 5)
>>> activation_patching(model, clean, corrupted, metric, "mlp_out")
Traceback (most recent call last):
...
ValueError: what: 'mlp_out' is not an activation of this model (attn_only has no MLP)
"""

import numpy as np

from netcl_lite.interp.checks import check_positions

PER_HEAD = {"heads": "attn.z", "pattern": "attn.pattern"}
PER_LAYER = ("resid_pre", "attn_out", "mlp_out", "resid_post")
FINAL = ("ln_final.input", "ln_final.scale")


def _units(model, what):
    """[(result index, activation name, head or None)] for ``what``."""
    L = len(model.blocks)
    if what in PER_HEAD:
        return [((layer, h), f"blocks.{layer}.{PER_HEAD[what]}", h)
                for layer in range(L)
                for h in range(model.blocks[layer].attn.n_heads)]
    if what in PER_LAYER:
        if what == "mlp_out" and any(b.ffn is None for b in model.blocks):
            raise ValueError("what: 'mlp_out' is not an activation of this "
                             "model (attn_only has no MLP)")
        return [((layer,), f"blocks.{layer}.{what}", None) for layer in range(L)]
    if what in FINAL:
        return [((0,), what, None)]
    raise ValueError(f"what: expected one of {[*PER_HEAD, *PER_LAYER, *FINAL]}, "
                     f"got {what!r}")


def _layout(units, n_positions):
    """The result's shape: the units' grid, then the positions."""
    grid = tuple(max(index[i] for index, _, _ in units) + 1
                 for i in range(len(units[0][0])))
    return grid + ((n_positions,) if n_positions else ())


def _select(act, name, head, s):
    """The slice of an activation that one patch replaces: head ``head``
    (or all of it) at position ``s`` (or every position)."""
    every = slice(None)
    pos = every if s is None else s
    if head is None:
        return (every, pos)                                   # (B, S, ...)
    if name.endswith("pattern"):
        return (every, head, pos)                             # (B, H, S, S) rows
    return (every, pos, head)                                 # (B, S, H, hd)


def _inputs(model, clean_ids, corrupted_ids, positions, per_position):
    clean_ids, corrupted_ids = np.asarray(clean_ids), np.asarray(corrupted_ids)
    if clean_ids.shape != corrupted_ids.shape or clean_ids.ndim != 2:
        raise ValueError(f"patching: clean ids {clean_ids.shape} and corrupted "
                         f"ids {corrupted_ids.shape} must be one (B, S) shape")
    S = clean_ids.shape[1]
    positions = check_positions(positions, S, "positions")
    if positions is not None and not isinstance(positions, list):
        raise ValueError("positions: give a list of positions to sweep")
    sweep = (positions if positions is not None else list(range(S))) \
        if per_position else [None]
    return clean_ids, corrupted_ids, sweep


def activation_patching(model, clean_ids, corrupted_ids, metric, what="heads",
                        per_position=True, positions=None):
    """metric(corrupted logits with one clean activation patched in), for
    every unit of ``what`` (and position); see the module's table."""
    units = _units(model, what)
    clean_ids, corrupted_ids, sweep = _inputs(model, clean_ids, corrupted_ids,
                                              positions, per_position)
    _, clean = model.run_with_cache(clean_ids, sorted({n for _, n, _ in units}))
    out = np.zeros(_layout(units, len(sweep) if per_position else 0))
    for index, name, head in units:
        for k, s in enumerate(sweep):
            where = _select(clean[name], name, head, s)

            def patch(act, where=where, name=name):
                act[where] = clean[name][where]
                return act
            logits = model.run_with_hooks(corrupted_ids, {name: patch})
            out[index + ((k,) if per_position else ())] = metric(logits)
    return out


def attribution_patching(model, clean_ids, corrupted_ids, metric, what="heads",
                         per_position=True, positions=None):
    """The first-order estimate of ``activation_patching``'s result minus
    metric(corrupted): sum of (clean - corrupted) * d metric / d
    activation over each patched slice, gradients on the corrupted run."""
    units = _units(model, what)
    clean_ids, corrupted_ids, sweep = _inputs(model, clean_ids, corrupted_ids,
                                              positions, per_position)
    names = sorted({n for _, n, _ in units})
    _, clean = model.run_with_cache(clean_ids, names)
    _, corrupted = model.run_with_cache(corrupted_ids, names)
    grads = model.activation_grads(corrupted_ids, metric, names)
    out = np.zeros(_layout(units, len(sweep) if per_position else 0))
    for index, name, head in units:
        change = (clean[name].astype(np.float64) - corrupted[name]) * grads[name]
        for k, s in enumerate(sweep):
            out[index + ((k,) if per_position else ())] = \
                change[_select(change, name, head, s)].sum()
    return out
