"""The quantised decoding kernels (``kernels/decode_quant.cl``), one
launcher each.

The float32 twin is ``decode.py``; here every weight matrix is a
``QuantizedWeight`` (rows = outputs, cols = inputs, in GGUF blocks), and a
work-item owns output rows. Forward only and gradient-free; each function
writes into buffers its caller allocated (``quantized_decoder.py``'s
``QuantizedDecoder`` owns them). Shapes, for B sequences with one new row
each:

    x, xn     (B, D)            the residual rows, their RMS-normalised copy
    xg        (B, D)            x times the gain of the norm that reads it
    q, o      (B, H * d_k)      the new query rows, the attention output
    k, v      (B, HKV, T, d_k)  the cache: T positions, T grows with the text
    hidden    (B, F)            the SwiGLU output
    logits    (B, V)

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.quantized import QuantizedWeight
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> w = QuantizedWeight.from_float(queue, np.eye(32)[:2], "F16")   # (2, 32)
>>> a = Tensor.from_host(queue, np.arange(32.0)[None])            # (B=1, 32)
>>> out = Tensor.from_host(queue, [[10.0, 20.0]])                 # (B=1, 2)
>>> matvec(a, w, out, B=1, accumulate=True)           # out += a @ W^T
>>> out.to_host()
array([[10., 21.]], dtype=float32)
"""

from netcl_lite.core.program import LOCAL_2D, ceil_div, launch, local_1d

SWIGLU_ROWS = 4   # hidden units per work-item of qdecode_swiglu
QKV_PAIRS = 2     # RoPE pairs (two rows each) per work-item of qdecode_qkv


def embed(table, ids, x, B):
    """x (B, D) = the rows ``ids`` (B,) of the quantised table (V, D)."""
    launch(x.queue, "quant_embedding", "quant_embedding", (table.cols, B),
           LOCAL_2D, table.scales, table.quants, ids, x, table.code, B,
           table.cols)


def norm(x, g, xn, B, D, eps):
    """xn = RMSNorm(x) * g, row by row (x, xn (B, D), g (D,))."""
    n = B * D // 32
    launch(x.queue, "decode_quant", "qdecode_norm", (n,), local_1d(n),
           x, g, xn, B, D, eps)


def gain(x, g, xg, B, D):
    """xg = x * g, row by row (x, xg (B, D), g (D,))."""
    launch(x.queue, "decode_quant", "qdecode_gain", (B * D,), local_1d(B * D),
           x, g, xg, B, D)


def qkv(x, xg, eps, wq, wk, wv, table, q, k, v, B, H, HKV, dk, T, pos):
    """q = RoPE(xn Wq^T); row pos of the caches: RoPE(xn Wk^T), xn Wv^T;
    xn = RMSNorm(x) = xg / rms(x), xg = x * the norm's gain."""
    n = ceil_div((H + 2 * HKV) * dk // 2, QKV_PAIRS)   # work-items
    launch(x.queue, "decode_quant", "qdecode_qkv", (n,), local_1d(n),
           x, xg, eps, wq.scales, wq.quants, wq.code, wk.scales, wk.quants, wk.code,
           wv.scales, wv.quants, wv.code, table, q, k, v, B, wq.cols, H, HKV,
           dk, T, pos)


def attention(q, k, v, scores, o, B, H, HKV, dk, T, length, scale, window):
    """o = each query row against the first ``length`` cached keys (GQA),
    ``scale`` on the scores; ``scores`` (B H, T) is scratch. d_k % 16 == 0.
    A work-group per head: the heads are few, and each core takes some."""
    launch(q.queue, "decode_quant", "qdecode_attention", (B * H,), (1,),
           q, k, v, scores, o, B, H, HKV, dk, T, length, scale, window)


def matvec(a, w, out, B, accumulate):
    """out (B, N) = a (B, K) W^T, or out += that when ``accumulate``."""
    launch(a.queue, "decode_quant", "qdecode_matvec", (w.rows,),
           local_1d(w.rows), a, w.scales, w.quants, w.code, out, B,
           w.cols, w.rows, int(bool(accumulate)))


def residual(a, w, x, g, xg, B):
    """x (B, N) += a (B, K) W^T, then xg = x * g (the next norm's gain)."""
    launch(a.queue, "decode_quant", "qdecode_residual", (w.rows,),
           local_1d(w.rows), a, w.scales, w.quants, w.code, x, g, xg, B,
           w.cols, w.rows)


def swiglu(x, xg, eps, w_gate, w_up, hidden, B):
    """hidden (B, F) = silu(xn Wg^T) * (xn Wu^T), Wg and Wu (F, D),
    xn = xg / rms(x) as in ``qkv``."""
    n = ceil_div(w_gate.rows, SWIGLU_ROWS)             # work-items
    launch(x.queue, "decode_quant", "qdecode_swiglu", (n,), local_1d(n),
           x, xg, eps, w_gate.scales, w_gate.quants, w_gate.code, w_up.scales,
           w_up.quants, w_up.code, hidden, B, w_gate.cols, w_gate.rows)
