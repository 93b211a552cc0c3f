"""Reference answers for chapter 12's exercises."""

import numpy as np


def exercise_1(base, scale, head_dim):
    """ntk_base: the slowest pair slows by `scale`, the fastest not at all."""
    return base * scale ** (head_dim / (head_dim - 2))


def exercise_2(n_positions, head_dim, base=10000.0, scale=1.0):
    """rope_angles: scale * m * theta_i, theta_i = base ** (-2i / d)."""
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)      # (d/2,)
    return scale * np.arange(n_positions)[:, None] * theta       # (n, d/2)


def exercise_3(logits, targets):
    """cross_entropy_per_position: stable log-softmax, pick, mean over B."""
    z = np.asarray(logits, np.float64)
    z = z - z.max(-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))          # (B, T, V)
    picked = np.take_along_axis(log_p, np.asarray(targets)[..., None], -1)
    return -picked[..., 0].mean(0)                                # (T,)
