"""Reference answers for chapter 00 (numpy; netcl_lite works just as well)."""

import numpy as np


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))  # subtract the max: no overflow
    return e / e.sum(axis=-1, keepdims=True)


def exercise_1(query, keys, values):
    """Soft lookup: softmax(K q / sqrt(d)) @ V, (d,), (n, d), (n, m) -> (m,)."""
    d = query.shape[-1]
    weights = _softmax(keys @ query / np.sqrt(d))  # (n,)
    return weights @ values                        # (m,)


def exercise_2(Q, K):
    """Causal weights: row i is softmax over keys 0..i, (S, d) x 2 -> (S, S)."""
    S, d = Q.shape
    scores = Q @ K.T / np.sqrt(d)                  # (S, S)
    future = np.triu(np.ones((S, S), dtype=bool), k=1)
    scores = np.where(future, -np.inf, scores)     # e^-inf = 0 exactly
    return _softmax(scores)
