"""Reference answers for chapter 14's exercises."""

import numpy as np


def exercise_1(pattern, L):
    """prefix_matching_score: attention from i >= L to i - L + 1."""
    queries = np.arange(L, 2 * L)
    return pattern[:, :, queries, queries - L + 1].mean(axis=(0, 2))   # (H,)


def exercise_2(w, head_dim):
    """to_interleaved: per head, row 2i <- row i, row 2i+1 <- row i + d/2."""
    half = head_dim // 2
    order = np.empty(head_dim, int)
    order[0::2], order[1::2] = np.arange(half), np.arange(half, head_dim)
    heads = w.reshape(-1, head_dim, w.shape[-1])                 # (H, hd, D)
    return heads[:, order].reshape(w.shape)                      # (H * hd, D)


def exercise_3(W_V, W_O, E, U):
    """copying_score: eigenvalues of the hd x hd W_O U E W_V."""
    lam = np.linalg.eigvals(W_O @ U @ E @ W_V)
    return float(lam.real.sum() / np.abs(lam).sum())
