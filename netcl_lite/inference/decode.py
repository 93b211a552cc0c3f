"""The fused decoding kernels (``kernels/decode.cl``), one launcher each.

Forward only and gradient-free: decoding is inference, and these are not
ops (no nodes, no tape). Each function writes into buffers its caller
allocated once (``inference/decoder.py``'s ``FusedDecoder`` owns them), so
a decoding step allocates nothing. Shapes, for B sequences with one new row
each:

    x, h      (B, D)           residual rows (or the embedding table, read
                               at row ``rows[b]``: layer 0's input)
    q, o      (B, H * d_k)     the new query rows, the attention output
    k, v      (B, HKV, T, d_k) the cache: T = max_seq_len positions
    hidden    (B, F)           the SwiGLU output
    logits    (B, V)

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, [[1.0, 2.0]])                 # (B=1, D=2)
>>> rows = Tensor.from_host(queue, np.array([0], np.int32))
>>> w = Tensor.from_host(queue, [[1.0, 0.0], [0.0, 1.0]])     # (K=2, N=2)
>>> out = Tensor.empty(queue, (1, 2))
>>> residual(x, rows, x, w, out, B=1, K=2, N=2)      # out = x + x @ w
>>> out.to_host()
array([[2., 4.]], dtype=float32)
"""

from netcl_lite.core.program import LOCAL_1D, ceil_div, launch

CB = 32  # output columns per work-item in decode.cl's matrix-vector kernels


def load_cache(src, dst, BH, P, T, d_k):
    """dst[:, :, :P] = src: a prompt's cached keys or values (BH, P, d_k) into
    a fixed-size cache (BH, T, d_k)."""
    launch(src.queue, "decode", "decode_load_cache", (BH * P,), LOCAL_1D,
           src, dst, BH, P, T, d_k)


def qkv(x, rows, norm_w, wqkv, table, q, k, v, B, D, H, HKV, d_k, T, pos, eps):
    """RMSNorm of each row, one pass over [Wq|Wk|Wv], RoPE at ``pos``: q gets
    the query rows, k and v their new row ``pos`` of the cache."""
    n = B * ceil_div((H + 2 * HKV) * d_k, CB)
    launch(q.queue, "decode", "decode_qkv", (n,), LOCAL_1D, x, rows, norm_w,
           wqkv, table, q, k, v, B, D, H, HKV, d_k, T, pos, eps)


def attention(q, k, v, o, B, H, HKV, d_k, T, length, scale, window=0):
    """o = each query row against the first ``length`` cached keys (GQA,
    online softmax), ``scale`` on the scores; ``window`` W > 0: only the
    last W of them (sliding-window attention), the older ones are not read."""
    launch(q.queue, "decode", "decode_attention", (B * H,), LOCAL_1D,
           q, k, v, o, B, H, HKV, d_k, T, length, scale, window)


def residual(res, rows, a, w, out, B, K, N):
    """out = res[rows] + a @ w: a (B, K), w (K, N), res and out (., N)."""
    if res.shape[-1] != N:
        raise ValueError(f"decode residual: the residual has {res.shape[-1]} "
                         f"columns, the product {N}")
    launch(a.queue, "decode", "decode_residual", (B * ceil_div(N, CB),),
           LOCAL_1D, res, rows, a, w, out, B, K, N)


def swiglu(h, norm_w, w_gate, w_up, hidden, B, D, F, eps):
    """hidden = silu(n @ w_gate) * (n @ w_up), n = RMSNorm(h)."""
    launch(h.queue, "decode", "decode_swiglu", (B * ceil_div(F, CB),),
           LOCAL_1D, h, norm_w, w_gate, w_up, hidden, B, D, F, eps)


def norm_matvec(x, norm_w, w, out, B, D, N, eps):
    """out = RMSNorm(x) @ w: the final norm and the output head."""
    launch(x.queue, "decode", "decode_norm_matvec", (B * ceil_div(N, CB),),
           LOCAL_1D, x, norm_w, w, out, B, D, N, eps)
