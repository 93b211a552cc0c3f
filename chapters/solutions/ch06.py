"""Reference answers for chapter 06's exercises."""

import numpy as np


def exercise_1(x, base=10000.0, offset=0):
    """rope_reference: float64 RoPE of interleaved pairs, rows at offset + s."""
    x = np.asarray(x, dtype=np.float64)
    S, d = x.shape
    theta = base ** (-2.0 * np.arange(d // 2) / d)           # (d/2,)
    angle = (offset + np.arange(S))[:, None] * theta[None, :]  # (S, d/2)
    c, s = np.cos(angle), np.sin(angle)
    x0, x1 = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2] = x0 * c - x1 * s
    out[:, 1::2] = x0 * s + x1 * c
    return out


def exercise_2(d_k, base=10000.0):
    """rope_wavelengths: tokens per full turn of each pair."""
    theta = base ** (-2.0 * np.arange(d_k // 2) / d_k)
    return 2 * np.pi / theta


def exercise_3(q_vec, k_vec, distance, base=10000.0):
    """relative_score: q^T R_(n-m) k; only k needs turning, by the distance."""
    k_turned = exercise_1(np.asarray(k_vec)[None, :], base=base, offset=distance)[0]
    return float(np.asarray(q_vec, dtype=np.float64) @ k_turned)
