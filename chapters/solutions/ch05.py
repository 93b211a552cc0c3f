"""Reference answers for chapter 05's exercises."""

import numpy as np


def exercise_1(x, H):
    """split_heads: (B, S, D) -> (B, S, H, Dh) -> (B, H, S, Dh)."""
    B, S, D = x.shape
    return x.reshape(B, S, H, D // H).transpose(0, 2, 1, 3)


def exercise_2(n_layers, seq_len, n_kv_heads, head_dim, bytes_per_value=2, batch=1):
    """kv_cache_bytes: a key and a value per token, layer and kv head."""
    return 2 * n_layers * seq_len * n_kv_heads * head_dim * bytes_per_value * batch


def exercise_3(w, n_heads, n_kv_heads):
    """repeat_kv_weights: (D, H_kv * Dh) -> (D, H * Dh), head blocks repeated."""
    D = w.shape[0]
    Dh = w.shape[1] // n_kv_heads
    blocks = w.reshape(D, n_kv_heads, Dh)                          # (D, H_kv, Dh)
    return np.repeat(blocks, n_heads // n_kv_heads, axis=1).reshape(D, -1)
