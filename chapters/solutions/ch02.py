"""Reference answers for chapter 02."""

import numpy as np


def exercise_1(V, D, bytes_per_value):
    """Memory of a (V, D) table: 32,000 x 2048 x 4 bytes -> 262,144,000."""
    return V * D * bytes_per_value


def exercise_2(ids, grad_out, V):
    """Scatter-add: row ids[n] of the result collects grad_out[n]."""
    grad = np.zeros((V, grad_out.shape[1]))        # (V, D)
    for n, token in enumerate(ids):                # one token at a time, in order
        grad[token] += grad_out[n]
    return grad


def exercise_3(ids, V):
    """One-hot rows: (N,) -> (N, V), row n has a 1 at column ids[n]."""
    out = np.zeros((len(ids), V))
    out[np.arange(len(ids)), ids] = 1.0
    return out
