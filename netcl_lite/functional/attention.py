"""Scaled dot-product attention composed of four ops: matmul, scale, softmax, matmul.

    A = softmax(q k^T / sqrt(d) + M)        (..., Sq, Sk)
    O = A v                                 (..., Sq, dv)

This is section 3 of the chapter, written as plain composition so autograd
flows through every step: ``attention_naive``. It keeps the whole (Sq, Sk)
matrix A in memory; it is the simple path and the oracle for the fused
online-softmax kernel (``flash_attention.py``), which
``scaled_dot_product_attention`` runs. The chapter's worked example
(S = 3, d_k = 2):

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> Q = Tensor.from_host(queue, [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> K = Tensor.from_host(queue, [[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
>>> V = Tensor.from_host(queue, [[10.0, 1.0], [20.0, 2.0], [30.0, 3.0]])
>>> np.round(F.attention_weights(Q, K).value.to_host().astype(float), 3)
array([[1.   , 0.   , 0.   ],
       [0.196, 0.804, 0.   ],
       [0.198, 0.401, 0.401]])
>>> O = F.scaled_dot_product_attention(Q, K, V)
>>> np.round(O.value.to_host().astype(float), 2)
array([[10.  ,  1.  ],
       [18.04,  1.8 ],
       [22.03,  2.2 ]])

A sliding window of W = 2 keys (``window=2``): query i sees keys i - 1 and
i only, so the last row drops key 0 and splits its weight between keys 1
and 2, whose scores tie:

>>> np.round(F.attention_weights(Q, K, window=2).value.to_host().astype(float), 3)
array([[1.   , 0.   , 0.   ],
       [0.196, 0.804, 0.   ],
       [0.   , 0.5  , 0.5  ]])
>>> O2 = F.scaled_dot_product_attention(Q, K, V, window=2)
>>> np.round(O2.value.to_host().astype(float), 2)
array([[10.  ,  1.  ],
       [18.04,  1.8 ],
       [25.  ,  2.5 ]])
"""

import math

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.tensor import FLOAT, Tensor, check_fits
from netcl_lite.core.validate import check_qkv
from netcl_lite.functional.elementwise import add
from netcl_lite.functional.elementwise import scale as scale_op
from netcl_lite.functional.flash_attention import (DMAX, TR, fused_attention,
                                                   score_scale)
from netcl_lite.functional.flash_attention_simple import (check_window,
                                                          simple_attention)
from netcl_lite.functional.matmul import matmul, matmul_strided
from netcl_lite.functional.repeat_kv import repeat_kv
from netcl_lite.functional.shape import reshape
from netcl_lite.functional.softmax import softmax

# Each public function checks its inputs once (``check_qkv``) and calls the
# private one, which trusts them: so does every function that calls it.

# Fewer query rows than this, against more keys: the plain kernel, on any
# device. It is the height of the fast kernel's register tile (TR = 6 rows).
FEW_QUERY_ROWS = TR


def _scores(q, k):
    *lead, Sq, d = q.shape
    Sk = k.shape[-2]
    batch = math.prod(lead)
    qv, kv = q.value, k.value
    # element (b, c, j) of k^T is k[b, j, c]: strides (Sk*d, 1, d)
    out = matmul_strided(qv, kv, batch, Sq, Sk, d,
                         (Sq * d, d, 1), (Sk * d, 1, d))
    out = out.reshape(*lead, Sq, Sk)                      # (..., Sq, Sk)

    def backward(g):
        # grad_q = g @ k : (batch, Sq, Sk) @ (batch, Sk, d)
        gq = matmul_strided(g, kv, batch, Sq, d, Sk,
                            (Sq * Sk, Sk, 1), (Sk * d, d, 1))
        # grad_k = g^T @ q : (batch, Sk, Sq) @ (batch, Sq, d); g^T by strides
        gk = matmul_strided(g, qv, batch, Sk, d, Sq,
                            (Sq * Sk, 1, Sk), (Sq * d, d, 1))
        return gq.reshape(q.shape), gk.reshape(k.shape)

    return record(out, (q, k), backward, "scores")


def scores(q, k):
    """q k^T: (..., Sq, d) x (..., Sk, d) -> (..., Sq, Sk), raw dot products.

    k^T is never copied: the matmul kernel reads k through transposed
    strides. Backward is two more matmuls: grad_q = g k, grad_k = g^T q.
    """
    q, k = nodes(q, k, dtype=None, op="scores")
    check_qkv("scores", q, k, gqa=False)
    return _scores(q, k)


def window_bias(device, shape, window):
    """(..., Sq, Sk): -inf where key j is W or more before query i's own
    position p = i + (Sk - Sq) (j <= p - W), 0 elsewhere. Added to the
    scores, it is the window's half of the mask; the causal half stays
    ``F.softmax``'s."""
    Sq, Sk = shape[-2:]
    p = np.arange(Sq)[:, None] + (Sk - Sq)                # (Sq, 1)
    old = np.arange(Sk)[None, :] <= p - window            # (Sq, Sk)
    bias = np.where(old, -np.inf, 0.0).astype(np.float32)
    return Tensor.from_host(device, np.broadcast_to(bias, shape))


def _weights(q, k, causal, c, window=0):
    logits = scale_op(_scores(q, k), c)                  # (..., Sq, Sk)
    if window:                                           # sliding window
        logits = add(logits, window_bias(q.device, logits.shape, window))
    return softmax(logits, causal=causal)                # (..., Sq, Sk)


def attention_weights(q, k, causal=True, scale=None, window=None):
    """A = softmax(q k^T / sqrt(d) + M), (..., Sq, Sk); d = q.shape[-1].

    q is (..., Sq, d) and k is (..., Sk, d) with the same leading dims.
    M hides key j from query i when j > i + (Sk - Sq) (see ``F.softmax``),
    and with ``window`` W also when j <= i + (Sk - Sq) - W.
    ``scale`` replaces 1/sqrt(d) when given.
    """
    q, k = nodes(q, k, dtype=None, op="attention_weights")
    check_qkv("attention_weights", q, k, gqa=False)
    c = score_scale(q.shape[-1], scale, "attention_weights")
    w = check_window(window, causal, k.shape[-2], "attention_weights")
    return _weights(q, k, causal, c, w)


def _naive(q, k, v, causal, c, window=0):
    # the (..., Sq, Sk) matrices held at once: scores, scaled scores, A;
    # with a window also its bias and the biased scores
    *lead, Sq, _ = q.shape
    shape = (*lead, Sq, k.shape[-2])
    n = 5 if window else 3
    check_fits(q.device, n * math.prod(shape) * FLOAT.itemsize,
               f"attention_naive's {n} float32 {shape} score matrices")
    A = _weights(q, k, causal, c, window)                # (..., Sq, Sk)
    return matmul(A, v)                                  # (..., Sq, dv)


def attention_naive(q, k, v, causal=True, scale=None, window=None):
    """matmul(attention_weights(q, k, causal, scale, window), v): four ops
    (five with a window), (Sq, Sk) kept.

    q (..., Sq, d), k (..., Sk, d), v (..., Sk, dv), same leading dims.
    The simple version of ``scaled_dot_product_attention`` and its oracle.
    """
    q, k, v = nodes(q, k, v, dtype=None, op="attention_naive")
    check_qkv("attention_naive", q, k, v, gqa=False)
    c = score_scale(q.shape[-1], scale, "attention_naive")
    w = check_window(window, causal, k.shape[-2], "attention_naive")
    return _naive(q, k, v, causal, c, w)


def scaled_dot_product_attention(q, k, v, causal=True, scale=None, window=None):
    """A v with A = attention_weights(q, k, causal, scale, window):
    (..., H, Sq, dv).

    q (..., H, Sq, d), k (..., HKV, Sk, d), v (..., HKV, Sk, dv); H == HKV
    (or the same leading dims) is plain attention.
    # GQA: query head h reads kv head h // (H // HKV), with no copies.

    Sliding-window attention (Mistral's; chapter 12's control): with
    ``window=W`` (causal only) query i sees the keys i - W < j <= i, where
    i counts from the first key when Sq == Sk (with a KV cache, query i is
    at position i + (Sk - Sq)). W >= Sk is plain causal attention. The
    fused kernels skip every block of keys outside all their rows' windows,
    so a row costs O(W), not O(Sk): the module docstring has a worked
    example.

    The one attention call of the modules (``nn/``): it chooses the kernel
    from the shapes and the device, never from the caller. The first row
    that applies wins:

        case                        device       kernel
        1  Sq < 6 and Sk > Sq:      any          flash_attention_simple.cl
           a few new rows against                (simple_attention)
           a KV cache (decoding)
        2  d or dv > 256            any          attention_naive: matmul,
                                                 scale, softmax, matmul
        3  otherwise                CPU          flash_attention.cl
                                                 (fast_attention)
        4  otherwise                GPU, accel-  flash_attention_simple.cl
                                    erator,      (simple_attention)
                                    Oclgrind
        outside this op:
        F.flash_attention           rows 3 and 4 (``fused_attention``); d or
                                    dv > 256 is a ValueError; kernel=
                                    "simple": the simple kernel, any d
        FusedDecoder (inference/)   decode.cl: decode_attention, one new row
                                    per sequence against its fixed-size cache,
                                    no autograd (``inference/decoder.py``)

    Why. 1: the fast kernel's tile holds 6 query rows, so fewer leave it
    mostly idle, and it first packs all of k and v (3 launches instead of 1,
    O(Sk) copies at every step); the plain kernel reads the cache where it
    lies. With Sk == Sq (a short prompt, with or without a cache) rows 3-4
    apply, so a prompt runs the same kernel whether or not a cache is kept.
    2: the fast kernel's private arrays hold rows of at most DMAX = 256
    values; the composed path has no limit but keeps the (Sq, Sk) matrices.
    3-4: a GPU work-item cannot hold the fast kernel's private arrays
    (``fused_attention`` says why; ``kernel_for`` is the rule). Rows 1, 3
    and 4 record the op "flash_attention", so a tape reads the same
    whichever of the two kernels ran.
    """
    q, k, v = nodes(q, k, v, dtype=None, op="scaled_dot_product_attention")
    batch, H, HKV = check_qkv("scaled_dot_product_attention", q, k, v)
    c = score_scale(q.shape[-1], scale, "scaled_dot_product_attention")
    Sq, Sk = q.shape[-2], k.shape[-2]
    w = check_window(window, causal, Sk, "scaled_dot_product_attention")
    if Sq < FEW_QUERY_ROWS and Sk > Sq:                  # 1: a decoding step
        return simple_attention(q, k, v, causal, batch, H, HKV, c,
                                op="flash_attention", window=w)
    if q.shape[-1] <= DMAX and v.shape[-1] <= DMAX:      # 3, 4: by device
        return fused_attention(q, k, v, causal, batch, H, HKV, c, w)
    if H != HKV:  # 2; the naive path needs one kv head per query head
        def repeat(x):                                   # (..., HKV, Sk, d)
            x = reshape(x, (batch, HKV, *x.shape[-2:]))
            x = repeat_kv(x, H // HKV)                   # (batch, H, Sk, d)
            return reshape(x, (*q.shape[:-2], *x.shape[-2:]))
        k, v = repeat(k), repeat(v)
    return _naive(q, k, v, causal, c, w)
