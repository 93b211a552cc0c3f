"""numpy references: rope, repeat_kv, embedding, rms_norm, silu, swiglu,
cross_entropy.

float64 throughout; each ``<op>_vjp(inputs..., g)`` returns one gradient per
input (None for integer ids/targets).
"""

import numpy as np


def rope_angles(S, d, base=10000.0, offset=0, scale=1.0):
    """(S, d/2): scale * (offset + s) * theta_i, theta_i = base ** (-2i / d)."""
    theta = base ** (-np.arange(0, d, 2) / d)            # (d/2,)
    return scale * (offset + np.arange(S))[:, None] * theta   # (S, d/2)


def _rotate(x, angles):
    x0, x1 = x[..., 0::2], x[..., 1::2]                  # (..., S, d/2) each
    c, s = np.cos(angles), np.sin(angles)
    out = np.empty_like(x, dtype=np.float64)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def rope(x, base=10000.0, offset=0, scale=1.0):
    S, d = x.shape[-2:]
    return _rotate(x, rope_angles(S, d, base, offset, scale))


def rope_vjp(x, g, base=10000.0, offset=0, scale=1.0):
    S, d = x.shape[-2:]
    return [_rotate(g, -rope_angles(S, d, base, offset, scale))]


def repeat_kv(x, n_rep):
    return np.repeat(x, n_rep, axis=1)                   # (B, HKV * n_rep, S, d_k)


def repeat_kv_vjp(x, n_rep, g):
    B, HKV, S, d_k = x.shape
    return [g.reshape(B, HKV, n_rep, S, d_k).sum(axis=2)]


def embedding(table, ids):
    return table[ids]                                    # (..., D)


def embedding_vjp(table, ids, g):
    gt = np.zeros_like(table, dtype=np.float64)
    np.add.at(gt, ids.ravel(), g.reshape(-1, table.shape[1]))
    return [gt, None]


def rms_norm(x, w, eps=1e-6):
    rstd = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return x * rstd * w


def rms_norm_vjp(x, w, g, eps=1e-6):
    D = x.shape[-1]
    rstd = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    gw_x = g * w
    dot = np.sum(gw_x * x, axis=-1, keepdims=True)
    gx = rstd * gw_x - x * rstd**3 * dot / D
    gw = np.sum((g * x * rstd).reshape(-1, D), axis=0)
    return [gx, gw]


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))                # stable for any x


def silu(x):
    return x * _sigmoid(x)


def silu_vjp(x, g):
    s = _sigmoid(x)
    return [g * (s + x * s * (1.0 - s))]


def swiglu(a, b):
    return silu(a) * b


def swiglu_vjp(a, b, g):
    return [silu_vjp(a, g * b)[0], g * silu(a)]


def log_softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def cross_entropy(logits, targets):
    lp = log_softmax(logits)
    picked = np.take_along_axis(lp, targets[..., None].astype(np.int64), axis=-1)
    return np.array(-picked.mean())


def cross_entropy_vjp(logits, targets, g):
    V = logits.shape[-1]
    N = logits.size // V
    p = np.exp(log_softmax(logits))
    onehot = np.eye(V)[targets]                          # (..., V)
    return [(p - onehot) * np.asarray(g) / N, None]
