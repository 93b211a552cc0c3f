"""numpy references: reshape, permute, transpose, softmax, attention.

Float64, written for clarity: the spec the kernels are tested against.
"""

import numpy as np


def reshape(x, shape):
    return np.reshape(x, shape)


def reshape_vjp(x, g, shape=None):
    return [np.reshape(g, x.shape)]


def permute(x, axes):
    return np.transpose(x, axes)


def permute_vjp(x, g, axes):
    axes = [a % x.ndim for a in axes]
    return [np.transpose(g, np.argsort(axes))]  # the inverse permutation


def transpose(x, dim0, dim1):
    return np.swapaxes(x, dim0, dim1)


def transpose_vjp(x, g, dim0, dim1):
    return [np.swapaxes(g, dim0, dim1)]


def causal_mask(Sq, Sk, window=None):
    """True where query i may see key j: j <= i + (Sk - Sq), and with a
    window W also j > i + (Sk - Sq) - W (the last W keys up to itself)."""
    i = np.arange(Sq)[:, None] + (Sk - Sq)     # query i's own position
    j = np.arange(Sk)[None, :]
    seen = j <= i
    return seen if window is None else seen & (j > i - window)


def _visible(x, causal, window=None):
    if not causal:
        return np.ones(x.shape, dtype=bool)
    return np.broadcast_to(causal_mask(*x.shape[-2:], window), x.shape)


def softmax(x, causal=False, window=None):
    """Masked entries and rows that see nothing give 0."""
    x = np.asarray(x, np.float64)
    seen = _visible(x, causal, window) & (x > -np.inf)
    m = np.max(np.where(seen, x, -np.inf), axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(seen, np.exp(np.where(seen, x - m, 0.0)), 0.0)
    s = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(s > 0, s, 1.0)


def softmax_vjp(x, g, causal=False, window=None):
    y = softmax(x, causal, window)
    return [y * (g - np.sum(g * y, axis=-1, keepdims=True))]


def _factor(d, scale):
    """The factor on q k^T: 1/sqrt(d) unless a scale is given."""
    return 1 / np.sqrt(d) if scale is None else scale


def attention_weights(q, k, causal=True, scale=None, window=None):
    c = _factor(q.shape[-1], scale)
    return softmax(q @ np.swapaxes(k, -1, -2) * c, causal, window)


def attention_weights_vjp(q, k, g, causal=True, scale=None, window=None):
    c = _factor(q.shape[-1], scale)
    logits = q @ np.swapaxes(k, -1, -2) * c             # (..., Sq, Sk)
    (gl,) = softmax_vjp(logits, g, causal, window)
    gq = gl @ k * c
    gk = np.swapaxes(gl, -1, -2) @ q * c
    return [gq, gk]


def scaled_dot_product_attention(q, k, v, causal=True, scale=None, window=None):
    """window W: query i sees keys i - W < j <= i (bottom-right aligned)."""
    return attention_weights(q, k, causal, scale, window) @ v


def scaled_dot_product_attention_vjp(q, k, v, g, causal=True, scale=None,
                                     window=None):
    A = attention_weights(q, k, causal, scale, window)   # (..., Sq, Sk)
    gA = g @ np.swapaxes(v, -1, -2)
    gv = np.swapaxes(A, -1, -2) @ g
    gq, gk = attention_weights_vjp(q, k, gA, causal, scale, window)
    return [gq, gk, gv]
