"""Reference answers for chapter 07's exercises."""

import netcl_lite.functional as F
from netcl_lite.core.tensor import Tensor


def exercise_1(dim, n_heads, n_kv_heads):
    """attention_parameter_count: W_Q, W_K, W_V and W_O."""
    Dh = dim // n_heads
    wq = dim * n_heads * Dh           # (dim, H * Dh)
    wk = wv = dim * n_kv_heads * Dh   # (dim, HKV * Dh) each
    wo = n_heads * Dh * dim           # (H * Dh, dim)
    return wq + wk + wv + wo


def exercise_2(f, x, v, h=1e-4):
    """directional_fd: the central difference, error O(h^2)."""
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def exercise_3(attn, x_host, b, h):
    """head_weights: project, split heads, RoPE, attention_weights."""
    q = attn.wq.queue
    H, HKV = attn.n_heads, attn.n_kv_heads
    x = Tensor.from_host(q, x_host)                           # (B, S, D)
    qh = attn.split_heads(F.matmul(x, attn.wq), H)            # (B, H, S, Dh)
    kh = attn.split_heads(F.matmul(x, attn.wk), HKV)          # (B, HKV, S, Dh)
    qh = F.rope(qh, base=attn.base)
    kh = F.repeat_kv(F.rope(kh, base=attn.base), H // HKV)    # (B, H, S, Dh)
    A = F.attention_weights(qh, kh, causal=True)              # (B, H, S, S)
    return A.value.to_host()[b, h]
