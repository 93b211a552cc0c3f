"""The matrices a circuit is made of, as float64 numpy arrays: the
embedding W_E (V, D), the unembedding W_U (D, V), and each head's W_Q,
W_K, W_V (D, hd) and W_O (hd, D), in the library's row convention
(y = x @ W).

A head's slices: query head h uses columns h hd .. (h + 1) hd - 1 of
``wq`` and rows h hd .. of ``wo``; with grouped kv heads (GQA) it reads kv
head h // (H // HKV) of ``wk`` and ``wv``. ``fold_norm=True`` multiplies
the rows of W_Q, W_K and W_V by the gain of the RMSNorm in front of the
attention, so that the matrices act on the normalised stream x / rms(x).

>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn import DecoderConfig, DecoderLM
>>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
...     vocab_size=20, dim=16, n_layers=1, n_heads=4, n_kv_heads=2))
>>> W = head_matrices(model, 0, 3)
>>> [W[k].shape for k in ("W_Q", "W_K", "W_V", "W_O")]
[(16, 4), (16, 4), (16, 4), (4, 16)]
>>> unembedding(model).shape
(16, 20)
"""

import numpy as np

from netcl_lite.autograd import Node
from netcl_lite.core.tensor import Tensor
from netcl_lite.interp.checks import check_head


def host(weight):
    """A parameter (node or Tensor) as a float64 array."""
    if isinstance(weight, Node):
        weight = weight.value
    if not isinstance(weight, Tensor):
        raise ValueError(f"expected a parameter node or a Tensor, got "
                         f"{type(weight).__name__}")
    return weight.to_host().astype(np.float64)


def embedding(model):
    """W_E, (V, D): row t is token t's vector."""
    return host(model.tok_emb.weight)


def unembedding(model):
    """W_U, (D, V): the output head (the embedding, transposed, when the
    model has no head of its own: tied weights)."""
    head = getattr(model, "head", None)
    weight = getattr(head, "weight", None)
    if weight is None:
        return embedding(model).T
    return host(weight)


def normalised_embedding(model):
    """W_E with each row divided by its root-mean-square: what block 0's
    norm makes of a token alone (before its gain), (V, D)."""
    E = embedding(model)
    eps = model.blocks[0].attn_norm.eps
    return E / np.sqrt(np.mean(E * E, axis=1, keepdims=True) + eps)


def head_matrices(model, layer, h, fold_norm=True):
    """{"W_Q", "W_K", "W_V": (D, hd), "W_O": (hd, D)} of head h of a layer."""
    layer, h = check_head(model, (layer, h), "head_matrices")
    attn = model.blocks[layer].attn
    hd, group = attn.head_dim, attn.n_heads // attn.n_kv_heads
    q, kv = slice(h * hd, (h + 1) * hd), slice(h // group * hd,
                                               (h // group + 1) * hd)
    out = {"W_Q": host(attn.wq)[:, q], "W_K": host(attn.wk)[:, kv],
           "W_V": host(attn.wv)[:, kv], "W_O": host(attn.wo)[q, :]}
    if fold_norm:
        gain = host(model.blocks[layer].attn_norm.weight)[:, None]   # (D, 1)
        for name in ("W_Q", "W_K", "W_V"):
            out[name] = gain * out[name]
    return out


def score_scale(model, layer):
    """The factor on q k^T in a layer: its ``scale``, else 1 / sqrt(hd)."""
    attn = model.blocks[layer].attn
    return attn.scale if attn.scale is not None else attn.head_dim ** -0.5
