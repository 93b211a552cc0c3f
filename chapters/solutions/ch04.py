"""Reference answers for chapter 04's exercises."""

import math

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor


def exercise_1(S):
    """causal_mask: -inf strictly above the diagonal, 0 elsewhere."""
    upper = np.triu(np.ones((S, S), dtype=bool), k=1)
    return np.where(upper, -np.inf, 0.0)


def exercise_2(Q, K, V, causal=True):
    """attention: a float64 numpy reference."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    logits = Q @ K.T / math.sqrt(Q.shape[1])            # (S, S)
    if causal:
        logits = logits + exercise_1(len(Q))
    logits = logits - logits.max(axis=1, keepdims=True)  # exp never overflows
    w = np.exp(logits)
    A = w / w.sum(axis=1, keepdims=True)
    return A @ V                                        # (S, d_v)


def exercise_3(Q, K, V, q_new, k_new, v_new):
    """new_token_output with the library: one query row against four keys."""
    q = manager.default("auto").queue
    q_row = Tensor.from_host(q, np.asarray(q_new)[None, :])   # (1, d)
    K4 = Tensor.from_host(q, np.vstack([K, k_new]))           # (4, d)
    V4 = Tensor.from_host(q, np.vstack([V, v_new]))           # (4, d_v)
    # causal=True aligns the mask bottom-right: the single row sees every key
    out = F.scaled_dot_product_attention(q_row, K4, V4, causal=True)
    return out.value.to_host()[0]
