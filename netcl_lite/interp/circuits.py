"""A head's QK and OV circuits, read from its weights (Elhage et al. 2021).

A head does two separate things. Its QK circuit decides where it
looks: the attention score of a query vector x_q on a key vector x_k is
the bilinear form x_q W_Q W_K^T x_k^T (times the score scale). Its OV
circuit decides what it writes once it looks: a key vector x_k moves
the output by x_k W_V W_O. Over the vocabulary, for the direct path from
the token embeddings, both are V x V matrices:

    QK[a, b] = score of a query holding token a on a key holding token b
    OV[a, :] = the logits a key holding token a adds (through W_U)

Conventions, each a choice:

- Norms. The gain of the RMSNorm in front of the attention is folded
  into W_Q, W_K and W_V (``weights.head_matrices``); a token's embedding
  is divided by its own root-mean-square, as that norm does to a token
  alone. The final norm's gain is folded into W_U; its per-position scale
  is one positive number per destination position, so it is left out (it
  scales a whole row of logits and changes no ranking).
- RoPE. Rotary positions make the score depend on where the two
  tokens sit: with R_m the rotation at position m (row convention, x R_m),
  (x_q W_Q R_m) . (x_k W_K R_n) = x_q W_Q R_(m - n) W_K^T x_k^T, so the QK
  matrix is a function of the relative offset m - n alone. We evaluate it
  at a stated offset (``offset``): 0 is the same position, 1 the previous
  token. ``positional_scores`` shows what the offset changes.
- OV is position-free: RoPE turns only q and k.

The copying score of an OV circuit is sum(lambda) / sum(|lambda|) over
its eigenvalues: +1 when the head raises the logit of the token it reads
(eigenvalues positive), -1 when it lowers it, near 0 for a random map.
It is computed in the head's space (hd x hd), where the nonzero
eigenvalues are the same (those of AB equal those of BA), so it works for
a vocabulary too large for the V x V matrix.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=1, n_heads=2, n_kv_heads=1))
>>> ov_circuit(model, 0, 1).shape, qk_circuit(model, 0, 1, offset=1).shape
((20, 20), (20, 20))
>>> full = np.linalg.eigvals(ov_circuit(model, 0, 1))
>>> bool(np.isclose(copying_score(model, 0, 1),
...                 full.real.sum() / np.abs(full).sum()))
True
>>> R = rope_rotation(4, offset=3)          # pairs turned by 3 theta_i
>>> bool(np.allclose(R @ R.T, np.eye(4)))
True
"""

import numpy as np

from netcl_lite.interp.checks import check_head
from netcl_lite.interp.weights import (head_matrices, host, normalised_embedding,
                                       score_scale, unembedding)


def rope_rotation(head_dim, offset, base=10000.0, scale=1.0):
    """R (hd, hd) with rope(x at position m) = x @ R(m), row convention:
    pair i, (x[2i], x[2i+1]), turns by scale * m * base ** (-2i / hd)."""
    if head_dim % 2:
        raise ValueError(f"rope_rotation: head_dim must be even, got {head_dim}")
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)      # (hd/2,)
    angle = scale * offset * theta
    R = np.zeros((head_dim, head_dim))
    c, s = np.cos(angle), np.sin(angle)
    i = np.arange(0, head_dim, 2)
    R[i, i], R[i, i + 1], R[i + 1, i], R[i + 1, i + 1] = c, s, -s, c
    return R


def _rotation(model, layer, offset):
    attn = model.blocks[layer].attn
    base = getattr(attn, "base", None)
    if base is None:                       # no RoPE in this attention
        return np.eye(attn.head_dim)
    return rope_rotation(attn.head_dim, offset, base, attn.rope_scale)


def qk_matrix(model, layer, h, offset=0):
    """(D, D): score = x_q M x_k^T for a query ``offset`` positions after
    its key, x the normalised stream (before the gain), scale included."""
    layer, h = check_head(model, (layer, h), "qk_matrix")
    W = head_matrices(model, layer, h)
    R = _rotation(model, layer, offset)
    return score_scale(model, layer) * W["W_Q"] @ R @ W["W_K"].T


def ov_matrix(model, layer, h):
    """(D, D): a key vector x_k (normalised stream) adds x_k M to the
    stream."""
    layer, h = check_head(model, (layer, h), "ov_matrix")
    W = head_matrices(model, layer, h)
    return W["W_V"] @ W["W_O"]


def _unembed(model):
    """W_U with the final norm's gain folded in, (D, V)."""
    return host(model.norm.weight)[:, None] * unembedding(model)


def qk_circuit(model, layer, h, offset=0):
    """(V, V): scores of query token a (row) on key token b (column),
    direct path from the embeddings, at relative offset ``offset``."""
    E = normalised_embedding(model)                              # (V, D)
    return E @ qk_matrix(model, layer, h, offset) @ E.T


def ov_circuit(model, layer, h):
    """(V, V): logits that attending to token a (row) adds, direct path."""
    E = normalised_embedding(model)                              # (V, D)
    return E @ ov_matrix(model, layer, h) @ _unembed(model)


def copying_score(model, layer, h):
    """sum(lambda) / sum(|lambda|) over the OV circuit's eigenvalues,
    computed as those of the (hd, hd) matrix W_O W_U' E' W_V."""
    layer, h = check_head(model, (layer, h), "copying_score")
    W = head_matrices(model, layer, h)
    E = normalised_embedding(model)
    small = W["W_O"] @ _unembed(model) @ E @ W["W_V"]            # (hd, hd)
    lam = np.linalg.eigvals(small)
    return float(lam.real.sum() / np.abs(lam).sum())


def copying_fraction(ov):
    """The share of rows of an OV circuit (V, V) whose own token gets the
    largest logit: how often attending to token a makes a the top guess."""
    ov = np.asarray(ov)
    return float(np.mean(np.argmax(ov, axis=1) == np.arange(len(ov))))


def positional_scores(model, layer, h, offsets):
    """The mean over token pairs of the QK circuit at each relative offset
    (len(offsets),): how much the head prefers a key by distance alone."""
    E = normalised_embedding(model)
    mean = E.mean(axis=0)                                        # (D,)
    return np.array([mean @ qk_matrix(model, layer, h, k) @ mean
                     for k in offsets])
