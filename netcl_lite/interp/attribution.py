"""Direct logit attribution: how much of a logit each component wrote
straight into the residual stream.

The stream that reaches the final norm is a sum of parts: the token
embedding, every head's output (z_h W_O^h, its slice of the attention
output) and every MLP's output. The final norm multiplies the stream by
one scale per position (``ln_final.scale``) and by its gain, then the head
W_U gives the logits. Hold the scale fixed at its value on this input and
the map from the stream to the logits is linear, so a logit splits
exactly into one term per part:

    logit[b, s, t] = sum over parts p of (p[b, s] * scale[b, s] * gain) . W_U[:, t]

The terms sum to the logit (up to float32 rounding); that is what makes
the attribution direct: it credits each part with what it writes, not
with what later layers do with it (a previous-token head's effect through
an induction head is not in its term).

``versus="mean"`` attributes the target's logit minus the mean logit over
the vocabulary (a shift of all logits does not change it); an array of ids
(B, S) attributes the difference with those ids' logits; None the logit.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=2, n_heads=2, n_kv_heads=1))
>>> ids = np.array([[1, 2, 3, 1, 2]], np.int32)
>>> dla = direct_logit_attribution(model, ids, targets=ids)
>>> dla.labels
['embed', 'L0H0', 'L0H1', 'L0 mlp', 'L1H0', 'L1H1', 'L1 mlp']
>>> dla.parts.shape                                   # (parts, B, S)
(7, 1, 5)
>>> bool(np.allclose(dla.parts.sum(axis=0), dla.total, atol=1e-4))
True
"""

import dataclasses

import numpy as np

from netcl_lite.interp.weights import host, unembedding


@dataclasses.dataclass
class Attribution:
    """``parts[i]`` (B, S) is what ``labels[i]`` writes into the attributed
    logit (difference); ``total`` (B, S) is that logit (difference) read
    from the model's own logits."""

    labels: list
    parts: np.ndarray
    total: np.ndarray


def attribution_names(model):
    """The activations the attribution reads."""
    names = ["blocks.0.resid_pre"]
    for i, block in enumerate(model.blocks):
        names.append(f"blocks.{i}.attn.z")
        if block.ffn is not None:
            names.append(f"blocks.{i}.mlp_out")
    return names + ["ln_final.scale"]


def residual_parts(model, cache):
    """(labels, parts (n, B, S, D)): the pieces that sum to ln_final.input."""
    labels, parts = ["embed"], [cache["blocks.0.resid_pre"]]
    for i, block in enumerate(model.blocks):
        z = cache[f"blocks.{i}.attn.z"].astype(np.float64)      # (B, S, H, hd)
        W_O = host(block.attn.wo)                                # (H hd, D)
        H, hd = z.shape[2], z.shape[3]
        for h in range(H):
            labels.append(f"L{i}H{h}")
            parts.append(z[:, :, h] @ W_O[h * hd:(h + 1) * hd])  # (B, S, D)
        if block.ffn is not None:
            labels.append(f"L{i} mlp")
            parts.append(cache[f"blocks.{i}.mlp_out"])
    return labels, np.stack([np.asarray(p, np.float64) for p in parts])


def _directions(model, targets, versus, shape):
    """(B, S, D): the column of W_U (times the norm's gain) each position's
    logit difference reads, so that difference = stream . direction."""
    W_U = unembedding(model)                                      # (D, V)
    V = W_U.shape[1]
    targets = np.asarray(targets)
    if targets.shape != shape:
        raise ValueError(f"direct_logit_attribution: targets of shape "
                         f"{targets.shape}, ids of shape {shape}")
    for ids, what in ((targets, "targets"),
                      (versus if isinstance(versus, np.ndarray) else None,
                       "versus")):
        if ids is not None and ((ids < 0) | (ids >= V)).any():
            bad = ids[(ids < 0) | (ids >= V)][0]
            raise ValueError(f"direct_logit_attribution: {what} id {bad} is "
                             f"outside 0..{V - 1}")
    out = W_U[:, targets].transpose(1, 2, 0)                     # (B, S, D)
    if isinstance(versus, str) and versus == "mean":
        out = out - W_U.mean(axis=1)
    elif isinstance(versus, np.ndarray):
        if versus.shape != shape:
            raise ValueError(f"direct_logit_attribution: versus of shape "
                             f"{versus.shape}, ids of shape {shape}")
        out = out - W_U[:, versus].transpose(1, 2, 0)
    elif versus is not None:
        raise ValueError(f"direct_logit_attribution: versus must be 'mean', "
                         f"None or a (B, S) array of ids, got {versus!r}")
    return out * host(model.norm.weight)                         # gain folded


def direct_logit_attribution(model, ids, targets, versus="mean"):
    """Each component's direct share of the targets' logits (B, S); see
    the module docstring. One forward pass, read through its cache."""
    if isinstance(versus, (list, tuple)):
        versus = np.asarray(versus)
    logits, cache = model.run_with_cache(ids, attribution_names(model))
    shape = np.asarray(ids).shape
    direction = _directions(model, targets, versus, shape)       # (B, S, D)
    labels, parts = residual_parts(model, cache)                 # (n, B, S, D)
    scale = cache["ln_final.scale"].astype(np.float64)           # (B, S, 1)
    contributions = np.einsum("nbsd,bsd->nbs", parts * scale, direction)
    t = np.asarray(targets)
    logits = logits.astype(np.float64)
    total = np.take_along_axis(logits, t[..., None], -1)[..., 0]   # (B, S)
    if isinstance(versus, np.ndarray):
        total = total - np.take_along_axis(logits, versus[..., None], -1)[..., 0]
    elif versus is not None:
        total = total - logits.mean(axis=-1)
    return Attribution(labels, contributions, total)
