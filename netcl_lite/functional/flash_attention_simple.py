"""Flash attention, the plain kernel (``kernels/flash_attention_simple.cl``;
chapter 08).

The same result as ``flash_attention``, computed the way chapter 08's
Python loop does it: one work-item per query row walks the keys one at a
time and keeps a running max m, a running sum l and the output row
(online softmax); no S x S matrix, no packing, no blocking. Read it
before the fast kernel, which adds register tiles and packed panels.

It is also the kernel a GPU runs (``fused_attention`` chooses). Its private
memory: a work-item keeps only scalars, m, l, one score, a few indices,
under 100 bytes at any head dim, because it adds into its output row where
that row lies, in global memory (``o`` in the kernel). That fits a GPU's
registers; the price is a read and a write of the row per key, which the
fast kernel avoids by keeping 12 rows in 27 KB of private arrays (fine on
a CPU, too much for a GPU work-item).

    q (..., H, Sq, d)   k (..., HKV, Sk, d)   v (..., HKV, Sk, dv)
    -> (..., H, Sq, dv)

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> Q = Tensor.from_host(queue, [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> K = Tensor.from_host(queue, [[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
>>> V = Tensor.from_host(queue, [[10.0, 1.0], [20.0, 2.0], [30.0, 3.0]])
>>> O = F.flash_attention(Q, K, V, causal=True, kernel="simple")   # plain
>>> np.round(O.value.to_host().astype(float), 2)
array([[10.  ,  1.  ],
       [18.04,  1.8 ],
       [22.03,  2.2 ]])
"""

import math

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_int, check_qkv
from netcl_lite.core.work import FLOAT, SOFTMAX, counts, visible


def check_window(window, causal, Sk, op="attention"):
    """The window as the kernels take it: 0 for none, else W < Sk.

    ``window`` is None or a positive int, and needs ``causal``: query i
    sees the keys p - W < j <= p, p = i + (Sk - Sq) its own position. A
    window of Sk keys or more hides nothing, so it is the same as none:

    >>> check_window(None, True, 10), check_window(4, True, 10)
    (0, 4)
    >>> check_window(16, True, 10)
    0
    >>> check_window(4, False, 10)
    Traceback (most recent call last):
    ...
    ValueError: attention: window=4 needs causal=True (a window is causal)
    """
    if window is None:
        return 0
    check_int(window, op, "window", low=1, what="None or a positive int")
    if not causal:
        raise ValueError(f"{op}: window={window} needs causal=True (a window "
                         f"is causal)")
    return int(window) if window < Sk else 0


def simple_attention(q, k, v, causal, batch, H, HKV, scale=None,
                     op="flash_attention_simple", window=0):
    """The plain kernel on nodes that ``check_qkv`` has passed; ``op``: the
    name the tape records (``fused_attention`` keeps "flash_attention");
    ``window``: 0 or W < Sk (``check_window``), each loop starts at the
    first key inside it."""
    *_, Sq, D = q.shape
    Sk, DV = k.shape[-2], v.shape[-1]
    rep = H // HKV                          # GQA: query heads per kv head
    BH, BHKV = batch * H, batch * HKV
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    device, causal = q.device, bool(causal)
    out = Tensor.empty(device, (*q.shape[:-1], DV))  # (..., H, Sq, DV)
    lse = Tensor.empty(device, (BH, Sq))             # log sum_j exp(s_ij)
    launch(device, "flash_attention_simple", "flash_attention_simple_forward",
           (BH * Sq,), LOCAL_1D, q.value, k.value, v.value, out, lse,
           BH, rep, Sq, Sk, D, DV, scale, causal, window)

    def backward(g):
        gq, gk, gv = (Tensor.empty(device, x.shape) for x in (q, k, v))
        delta = Tensor.empty(device, (BH, Sq))       # rowsum(dO * O)
        launch(device, "flash_attention_simple",
               "flash_attention_simple_backward_dq", (BH * Sq,), LOCAL_1D,
               q.value, k.value, v.value, out, g, lse, gq, delta,
               BH, rep, Sq, Sk, D, DV, scale, causal, window)
        launch(device, "flash_attention_simple",
               "flash_attention_simple_backward_dkv", (BHKV * Sk,), LOCAL_1D,
               q.value, k.value, v.value, g, lse, delta, gk, gv,
               BHKV, rep, Sq, Sk, D, DV, scale, causal, window)
        return gq, gk, gv

    return record(out, (q, k, v), backward, op)


@counts("flash_attention_simple_forward")
def _forward_work(a):
    # per visible pair: the score q.k (2 D), the softmax, p v (2 DV); reads
    # q, k, v, writes out and lse (BH, Sq)
    BH, Sq, Sk, D, DV = a["BH"], a["Sq"], a["Sk"], a["D"], a["DV"]
    pairs = BH * visible(Sq, Sk, a["causal"])
    return (pairs * (2 * D + 2 * DV + SOFTMAX),
            FLOAT * (BH * Sq * (D + DV + 1) + BH // a["rep"] * Sk * (D + DV)))


@counts("flash_attention_simple_backward_dq")
def _dq_work(a):
    # per pair: the score (2 D), dP = dO . v (2 DV), P and dS (SOFTMAX),
    # dq += dS k (2 D); reads q, out, dO, lse, k, v; writes dq and delta
    BH, Sq, Sk, D, DV = a["BH"], a["Sq"], a["Sk"], a["D"], a["DV"]
    pairs = BH * visible(Sq, Sk, a["causal"])
    return (pairs * (4 * D + 2 * DV + SOFTMAX),
            FLOAT * (BH * Sq * (2 * D + 2 * DV + 2)
                     + BH // a["rep"] * Sk * (D + DV)))


@counts("flash_attention_simple_backward_dkv")
def _dkv_work(a):
    # per pair: the score (2 D), dP (2 DV), P and dS (SOFTMAX), dv += p dO
    # (2 DV), dk += dS q (2 D); reads q, dO, lse, delta, k, v; writes dk, dv
    BH = a["BHKV"] * a["rep"]
    Sq, Sk, D, DV = a["Sq"], a["Sk"], a["D"], a["DV"]
    pairs = BH * visible(Sq, Sk, a["causal"])
    return (pairs * (4 * D + 4 * DV + SOFTMAX),
            FLOAT * (BH * Sq * (D + DV + 2) + 2 * a["BHKV"] * Sk * (D + DV)))


def flash_attention_simple(q, k, v, causal=True, window=None):
    """softmax(q k^T / sqrt(d) + M) v on the plain kernel (any head dim);
    ``window`` as in ``F.scaled_dot_product_attention``."""
    q, k, v = nodes(q, k, v, dtype=None, op="flash_attention_simple")
    batch, H, HKV = check_qkv("flash_attention_simple", q, k, v)
    w = check_window(window, causal, k.shape[-2], "flash_attention_simple")
    return simple_attention(q, k, v, causal, batch, H, HKV, window=w)
