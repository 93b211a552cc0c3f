"""Reference answers for chapter 03."""

import math

import numpy as np


def exercise_1(threshold, d_k):
    """2 (1 - Phi(t / sqrt(d_k))) = erfc(t / sqrt(2 d_k)); (35, 128) -> 0.00198."""
    return math.erfc(threshold / math.sqrt(2 * d_k))


def exercise_2(z):
    """Softmax Jacobian diag(p) - p p^T for logits z (n,) -> (n, n)."""
    e = np.exp(z - np.max(z))                   # no overflow for large logits
    p = e / e.sum()
    return np.diag(p) - np.outer(p, p)


def exercise_3(d_k, var_q, var_k):
    """Var(q.k) = d_k var_q var_k (each term has variance var_q var_k), so
    a = 1 / sqrt(d_k var_q var_k); unit variances give 1 / sqrt(d_k)."""
    return 1.0 / math.sqrt(d_k * var_q * var_k)
