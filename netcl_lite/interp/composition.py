"""Composition scores: how much a later head reads what an earlier head
writes (Elhage et al. 2021).

An earlier head (the sender) adds x OV1 to the stream, OV1 = W_V W_O
(D, D). A later head (the receiver) can read it in three places:

- Q-composition: in its queries,   OV1 @ QK2 (the sender moves where
  the receiver looks from);
- K-composition: in its keys,      QK2 @ OV1^T (the sender changes
  which keys the receiver finds: an induction head finds the position
  whose previous token matches, written there by a previous-token head);
- V-composition: in its values,    OV1 @ OV2 (the sender changes what
  the receiver moves).

with QK2 = W_Q R W_K^T the receiver's score matrix (``circuits.qk_matrix``,
at a relative offset for RoPE) and OV2 its OV matrix. The score is

    ||product||_F / (||first factor||_F ||second factor||_F),

which is 1 only when the two matrices line up completely and does not
depend on their scales. Two random matrices also compose a little, more
the smaller D is against the heads' ranks, so a score means something
only against ``random_baseline``: the same score for Gaussian weights of
the same shapes, over many draws. The receiver's norm gain is folded into
its matrices (``weights.head_matrices``); the norm's per-position scale is
a number, and the score ignores numbers.

In the library's row convention (y = x @ W) these are Elhage et al.'s
||W_QK^T W_OV||, ||W_QK W_OV|| and ||W_OV2 W_OV1||, transposed.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=2, n_heads=2, n_kv_heads=2))
>>> k = composition_score(model, "k", sender=(0, 1), receiver=(1, 0))
>>> 0 < k < 1
True
>>> mean, std = random_baseline(model, "k", draws=50, seed=0)
>>> bool(0 < mean < 1 and std > 0)
True
>>> composition_score(model, "k", sender=(1, 0), receiver=(0, 1))
Traceback (most recent call last):
...
ValueError: composition_score: sender (1, 0) must sit in a layer before receiver (0, 1)
"""

import numpy as np

from netcl_lite.interp.checks import check_head
from netcl_lite.interp.circuits import ov_matrix, qk_matrix

KINDS = ("q", "k", "v")


def _score(A, B):
    return float(np.linalg.norm(A @ B) /
                 (np.linalg.norm(A) * np.linalg.norm(B)))


def compose(kind, ov1, qk2, ov2):
    """The score of one kind, from the sender's OV and the receiver's QK
    and OV matrices (D, D)."""
    if kind == "q":
        return _score(ov1, qk2)
    if kind == "k":
        return _score(qk2, ov1.T)
    if kind == "v":
        return _score(ov1, ov2)
    raise ValueError(f"composition: kind must be one of {KINDS}, got {kind!r}")


def composition_score(model, kind, sender, receiver, offset=0):
    """The ``kind`` ("q", "k" or "v") composition of the sender head
    (layer, h) into a receiver head in a later layer; ``offset``: the
    relative position at which the receiver's QK matrix is taken."""
    sender = check_head(model, sender, "composition_score")
    receiver = check_head(model, receiver, "composition_score")
    if kind not in KINDS:
        raise ValueError(f"composition: kind must be one of {KINDS}, got {kind!r}")
    if sender[0] >= receiver[0]:
        raise ValueError(f"composition_score: sender {sender} must sit in a "
                         f"layer before receiver {receiver}")
    return compose(kind, ov_matrix(model, *sender),
                   qk_matrix(model, *receiver, offset=offset),
                   ov_matrix(model, *receiver))


def random_baseline(model, kind, draws=200, seed=0):
    """(mean, std) of the ``kind`` composition score between two heads
    whose W_Q, W_K, W_V (D, hd) and W_O (hd, D) are drawn Gaussian, with
    the model's D and hd, over ``draws`` draws."""
    if kind not in KINDS:
        raise ValueError(f"composition: kind must be one of {KINDS}, got {kind!r}")
    D, hd = model.config.dim, model.blocks[0].attn.head_dim
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(draws):
        Wq, Wk, Wv1, Wv2 = rng.standard_normal((4, D, hd))
        Wo1, Wo2 = rng.standard_normal((2, hd, D))
        scores.append(compose(kind, Wv1 @ Wo1, Wq @ Wk.T, Wv2 @ Wo2))
    return float(np.mean(scores)), float(np.std(scores))
