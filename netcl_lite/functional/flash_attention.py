"""Fused attention with online softmax (``kernels/flash_attention.cl``).

``flash_attention(q, k, v, causal=True)`` computes what the composed
path of ``attention.py`` computes, softmax(q k^T / sqrt(d) + M) v, but one
block of 64 keys at a time: a running max and sum per query row rescale the
output as new keys arrive, so no (Sq, Sk) matrix ever exists. The backward
rebuilds each block of the softmax from the one number per row the forward
keeps (its logsumexp), FlashAttention-2 style.

    q (..., H, Sq, d)   k (..., HKV, Sk, d)   v (..., HKV, Sk, dv)
    -> (..., H, Sq, dv)

GQA: query head h reads kv head h // (H // HKV) straight from k and v, no
copies; when q and k have the same leading dims it is plain attention.
``kernel="simple"`` runs the plain kernel of the same algorithm instead
(``flash_attention_simple.py``): the one to read first. A GPU runs the plain
one in any case: the fast kernel is shaped for a CPU (``fused_attention``).
Which kernel runs in each case: the table in
``F.scaled_dot_product_attention``, the call the modules make.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> Q = Tensor.from_host(queue, [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> K = Tensor.from_host(queue, [[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
>>> V = Tensor.from_host(queue, [[10.0, 1.0], [20.0, 2.0], [30.0, 3.0]])
>>> O = F.flash_attention(Q, K, V, causal=True)   # the chapter's example
>>> np.round(O.value.to_host().astype(float), 2)
array([[10.  ,  1.  ],
       [18.04,  1.8 ],
       [22.03,  2.2 ]])
"""

import math
import warnings

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, ceil_div, launch, local_1d
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_number, check_qkv
from netcl_lite.core.work import FLOAT, SOFTMAX, counts, visible
from netcl_lite.functional.flash_attention_simple import (check_window,
                                                          simple_attention)

# kernels/flash_attention.cl: a forward work-item owns up to RT * TR query
# rows, a backward one TR rows; keys come in panels of TC
RT, TR, TC = 2, 6, 16
DMAX = 256       # the kernel's largest head dim
KERNELS = (None, "simple")   # flash_attention's kernel=: the device's, plain
LOG2E = 1.4426950408889634


def score_scale(d, scale=None, op="attention"):
    """The factor on q k^T: 1/sqrt(d) by default, else ``scale`` (chapter 11
    trains with scale=1.0, no 1/sqrt(d_k), to see what the factor buys).

    >>> score_scale(64), score_scale(64, scale=1.0)
    (0.125, 1.0)
    """
    if scale is None:
        return 1.0 / math.sqrt(d)
    return check_number(scale, op, "scale", 0, low_open=True,
                        what="a positive number or None")


def _round16(n):
    return ceil_div(n, TC) * TC


def _pack_panels(x, N, S, D):
    """x (N, S, D) -> (N, S16/16, D, 16): 16 rows side by side, zero padded."""
    out = Tensor.empty(x.device, (N, _round16(S) // TC, D, TC))
    launch(x.device, "flash_attention", "flash_attention_pack_panels",
           (out.size // TC,), LOCAL_1D, x, out, N, S, D, _round16(S))
    return out


@counts("flash_attention_pack_panels")
def _pack_panels_work(a):
    # x (N, S, D) read, panels (N, Sp, D) written
    return 0, FLOAT * a["N"] * a["D"] * (a["S"] + a["Sp"])


def _pack_rows(x, N, S, D):
    """x (N, S, D) -> (N, S16, D16): zero-padded rows for float8 reads.
    When S and D are multiples of 16 already, that is x itself: no copy."""
    if S == _round16(S) and D == _round16(D):
        return x
    out = Tensor.empty(x.device, (N, _round16(S), _round16(D)))
    launch(x.device, "flash_attention", "flash_attention_pack_rows",
           (N * _round16(S),), LOCAL_1D, x, out, N, S, D, _round16(S),
           _round16(D))
    return out


@counts("flash_attention_pack_rows")
def _pack_rows_work(a):
    # x (N, S, D) read, zero-padded rows (N, Sp, DP) written
    return 0, FLOAT * a["N"] * (a["S"] * a["D"] + a["Sp"] * a["DP"])


def flash_attention(q, k, v, causal=True, kernel=None, scale=None,
                    window=None, fast=None):
    """softmax(q k^T / sqrt(d) + M) v, fused; see the module docstring.

    ``kernel``: None lets the device choose (``fused_attention``: the fast
    kernel, flash_attention.cl, on a CPU; the plain one elsewhere);
    "simple" runs the plain one, flash_attention_simple.cl, on any device
    and at any d. ``scale`` replaces 1/sqrt(d) when given (the kernels
    take it as an argument). ``window`` W (causal only): query i sees the W
    keys up to its own position, as in ``F.scaled_dot_product_attention``.
    Memory: O(S d) per head (the output, one logsumexp per row, packed
    copies of k and v); never (Sq, Sk). d and dv are at most 256 for the
    fast kernel. ``fast=False``, the old spelling of ``kernel="simple"``,
    still works and warns (DeprecationWarning).
    """
    if fast is not None:
        warnings.warn('flash_attention: fast= is deprecated; say which '
                      'kernel: kernel="simple" (fast=False) or kernel=None '
                      '(fast=True)', DeprecationWarning, stacklevel=2)
        if kernel is None and not fast:
            kernel = "simple"
    if kernel not in KERNELS:
        raise ValueError(f"flash_attention: kernel must be one of {KERNELS}, "
                         f"got {kernel!r}")
    q, k, v = nodes(q, k, v, dtype=None, op="flash_attention")
    batch, H, HKV = check_qkv("flash_attention", q, k, v)
    sm = score_scale(q.shape[-1], scale, "flash_attention")
    w = check_window(window, causal, k.shape[-2], "flash_attention")
    if kernel == "simple":
        return simple_attention(q, k, v, causal, batch, H, HKV, sm, window=w)
    D, DV = q.shape[-1], v.shape[-1]
    if D > DMAX or DV > DMAX:
        raise ValueError(f"flash_attention: head dims d={D}, dv={DV}; the "
                         f"fused kernel takes at most {DMAX}")
    return fused_attention(q, k, v, causal, batch, H, HKV, sm, w)


def kernel_for(device):
    """"fast" (kernels/flash_attention.cl) or "simple"
    (kernels/flash_attention_simple.cl): the kernel for a Device (its
    ``kind`` is read, which ``core/device.py: kind_of`` decides: Oclgrind
    stands in for a GPU). The rule, and why, is ``fused_attention``'s.

    >>> from types import SimpleNamespace
    >>> kernel_for(SimpleNamespace(kind="cpu")), kernel_for(SimpleNamespace(kind="gpu"))
    ('fast', 'simple')
    """
    return "fast" if device.kind == "cpu" else "simple"


def fused_attention(q, k, v, causal, batch, H, HKV, sm=None, window=0):
    """Fused attention on nodes that ``check_qkv`` has passed, d, dv <= DMAX;
    ``sm`` is the factor on q k^T (a checked ``score_scale``), ``window``
    0 or W < Sk (a checked ``check_window``).

    The kernel that suits the device: flash_attention.cl (``fast_attention``)
    on a CPU, flash_attention_simple.cl (``simple_attention``) on anything
    else. ``F.flash_attention`` (kernel=None) comes here, and so does
    ``F.scaled_dot_product_attention`` after its own rules; the table of
    every case is in its docstring (functional/attention.py).

    Why: a work-item of the fast kernel holds its rows in private arrays,
    27.7 KB in the forward (``a``, ``acc``, ``s``: 12 rows of DMAX floats,
    twice, and 12 x 64 scores), 21.6 KB in backward_dq, 29.7 KB in
    backward_dkv. A CPU keeps that in its caches. A GPU keeps a
    work-item's private values in registers, about 1 KB of them; the rest
    spills to slow off-chip memory, or the kernel fails to launch. The
    simple kernel keeps a few scalars per work-item (its output row sits in
    global memory), so it fits a GPU at any head dim.

    OpenCL has no portable query for the private memory a device offers a
    work-item (CL_KERNEL_PRIVATE_MEM_SIZE says what a built kernel uses, and
    PoCL answers 1024 bytes for each of these), so the device type is the
    practical rule (``kernel_for``). Both kernels record the op
    "flash_attention", so a tape reads the same on every device.
    """
    if kernel_for(q.device) == "simple":
        return simple_attention(q, k, v, causal, batch, H, HKV, sm,
                                op="flash_attention", window=window)
    return fast_attention(q, k, v, causal, batch, H, HKV, sm, window)


def fast_attention(q, k, v, causal, batch, H, HKV, sm=None, window=0):
    """The fast kernel, on any device (``fused_attention`` runs it on a CPU
    only); the same arguments as ``fused_attention``."""
    *_, Sq, D = q.shape
    Sk, DV = k.shape[-2], v.shape[-1]
    rep = H // HKV
    BH, BHKV = batch * H, batch * HKV
    device = q.device
    sm = score_scale(D) if sm is None else sm      # 1/sqrt(D) by default
    c = LOG2E * sm
    causal = bool(causal)
    kt = _pack_panels(k.value, BHKV, Sk, D)        # (BHKV, Sk16/16, D, 16)
    vr = _pack_rows(v.value, BHKV, Sk, DV)         # (BHKV, Sk16, DV16)
    out = Tensor.empty(device, (*q.shape[:-1], DV))  # (..., H, Sq, DV)
    lse2 = Tensor.empty(device, (BH, Sq))          # one number per query row
    # 12 rows per work-item share each block of k and v; 6 when that would
    # leave under 16 work-groups of 64 to share out between the cores
    rt = RT if BH * ceil_div(Sq, RT * TR) >= 16 * 64 else 1
    items = BH * ceil_div(Sq, rt * TR)
    launch(device, "flash_attention", "flash_attention_forward",
           (items,), local_1d(items), q.value, kt, vr, out, lse2,
           BH, rep, Sq, Sk, _round16(Sk), D, DV, _round16(DV), c, causal, rt,
           window)
    del kt, vr  # the backward packs again: only q, k, v, out, lse2 stay alive

    def backward(g):
        qv, kv, vv = q.value, k.value, v.value
        kt = _pack_panels(kv, BHKV, Sk, D)         # (BHKV, Sk16/16, D, 16)
        kr = _pack_rows(kv, BHKV, Sk, D)           # (BHKV, Sk16, D16)
        vt = _pack_panels(vv, BHKV, Sk, DV)        # (BHKV, Sk16/16, DV, 16)
        gq = Tensor.empty(device, q.shape)
        drow = Tensor.empty(device, (BH, Sq))      # rowsum(dO * O)
        items = BH * ceil_div(Sq, TR)
        launch(device, "flash_attention", "flash_attention_backward_dq",
               (items,), local_1d(items), qv, kt, kr, vt, out, g, lse2,
               gq, drow, BH, rep, Sq, Sk, _round16(Sk), D, _round16(D), DV,
               c, sm, causal, window)
        del kt, kr, vt
        qt = _pack_panels(qv, BH, Sq, D)           # (BH, Sq16/16, D, 16)
        qr = _pack_rows(qv, BH, Sq, D)             # (BH, Sq16, D16)
        gt = _pack_panels(g, BH, Sq, DV)           # (BH, Sq16/16, DV, 16)
        gr = _pack_rows(g, BH, Sq, DV)             # (BH, Sq16, DV16)
        gk = Tensor.empty(device, k.shape)
        gv = Tensor.empty(device, v.shape)
        items = BHKV * ceil_div(Sk, TR)
        launch(device, "flash_attention", "flash_attention_backward_dkv",
               (items,), local_1d(items), kv, vv, qt, qr, gt, gr, lse2,
               drow, gk, gv, BHKV, rep, Sq, Sk, _round16(Sq), D, _round16(D),
               DV, _round16(DV), c, sm, causal, window)
        return gq, gk, gv

    return record(out, (q, k, v), backward, "flash_attention")


@counts("flash_attention_forward")
def _forward_work(a):
    # per visible pair: the score q.k (2 D), the softmax, p v (2 DV); lse2 is
    # (BH, Sq)
    BH, Sq, Sk, D, DV = a["BH"], a["Sq"], a["Sk"], a["D"], a["DV"]
    pairs = BH * visible(Sq, Sk, a["causal"])
    return (pairs * (2 * D + 2 * DV + SOFTMAX),
            FLOAT * (BH * Sq * (D + DV + 1) + BH // a["rep"] * Sk * (D + DV)))


@counts("flash_attention_backward_dq")
def _dq_work(a):
    # per pair: the score again (2 D), dP = dO . v (2 DV), P and dS (SOFTMAX),
    # dq += dS k (2 D); reads q, k (twice: panels and rows), v, o, dO, lse2;
    # writes dq, drow
    BH, Sq, Sk, D, DV = a["BH"], a["Sq"], a["Sk"], a["D"], a["DV"]
    pairs = BH * visible(Sq, Sk, a["causal"])
    return (pairs * (4 * D + 2 * DV + SOFTMAX),
            FLOAT * (BH * Sq * (2 * D + 2 * DV + 2)
                     + BH // a["rep"] * Sk * (2 * D + DV)))


@counts("flash_attention_backward_dkv")
def _dkv_work(a):
    # per pair: the score (2 D), dP (2 DV), P and dS (SOFTMAX), dv += p dO
    # (2 DV), dk += dS q (2 D); reads k, v, q and dO (each as panels and
    # rows), lse2, drow; writes dk, dv
    BH = a["BHKV"] * a["rep"]
    Sq, Sk, D, DV = a["Sq"], a["Sk"], a["D"], a["DV"]
    pairs = BH * visible(Sq, Sk, a["causal"])
    return (pairs * (4 * D + 4 * DV + SOFTMAX),
            FLOAT * (BH * Sq * (2 * D + 2 * DV + 2)
                     + 2 * a["BHKV"] * Sk * (D + DV)))
