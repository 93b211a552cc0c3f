"""Reference answers for chapter 11's exercises."""

import numpy as np


def exercise_1(n_layers, n_kv_heads, head_dim, bytes_per_value=4):
    """kv_cache_bytes_per_token: keys and values, every layer and kv head."""
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_value


def exercise_2(A):
    """mean_attention_entropy: -sum A ln A per row, 0 ln 0 = 0, then the mean."""
    A = np.asarray(A, np.float64)
    logs = np.log(np.where(A > 0, A, 1.0))             # ln 1 = 0 where A = 0
    return float(np.mean(-np.sum(A * logs, axis=-1)))


def exercise_3(table, token, k):
    """nearest_by_cosine: unit rows, dot products, best k without the token."""
    table = np.asarray(table, np.float64)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    cos = unit @ unit[token]
    cos[token] = -np.inf
    return list(np.argsort(cos)[::-1][:k])
