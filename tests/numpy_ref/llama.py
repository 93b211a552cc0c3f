"""numpy reference: a llama decoder's forward pass over weights as files
store them (one row per output feature, (out, in)), written from the
formulas, sharing nothing with netcl_lite. It checks DecoderLM.from_gguf
and from_hf.

    x = E[ids]
    per layer:  h = x + attention(RMSNorm(x)) W_o^T
                x = h + (silu(n W_gate^T) * n W_up^T) W_down^T, n = RMSNorm(h)
    logits = RMSNorm(x) W_head^T        (tied: W_head = E)

RoPE comes in two layouts:
- "interleaved": pairs (x[2i], x[2i+1]), GGUF's layout (and F.rope's);
- "half": pairs (x[i], x[i + d/2]), transformers' ``rotate_half``, applied
  to a Hugging Face checkpoint's weights as they are in the file.
Pair i turns by position * base ** (-2i / d) in both.

``weights`` is a dict: ``emb`` (V, D), ``norm`` (D,), ``head`` (V, D) or
None when tied, and ``layers``, a list of dicts with ``attn_norm``,
``q`` (H d, D), ``k`` and ``v`` (HKV d, D), ``o`` (D, H d), ``ffn_norm``,
``gate`` and ``up`` (F, D), ``down`` (D, F).
"""

import numpy as np


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def angles(S, d, base):
    """(S, d/2) float64: position s times base ** (-2i / d)."""
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    return np.arange(S, dtype=np.float64)[:, None] * theta


def rope_interleaved(x, base):
    """x (n, S, d): pairs (2i, 2i+1) turned."""
    a = angles(x.shape[1], x.shape[2], base)
    c, s = np.cos(a).astype(x.dtype), np.sin(a).astype(x.dtype)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def rope_half(x, base):
    """x (n, S, d): pairs (i, i + d/2) turned, as transformers does:
    x cos + rotate_half(x) sin, cos and sin repeated over both halves."""
    a = angles(x.shape[1], x.shape[2], base)
    a = np.concatenate([a, a], axis=-1)                      # (S, d)
    c, s = np.cos(a).astype(x.dtype), np.sin(a).astype(x.dtype)
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * c + rotated * s


def attention(q, k, v):
    """q (H, S, d), k and v (HKV, S, d): causal softmax attention, query
    head h reading kv head h // (H // HKV)."""
    H, S, d = q.shape
    group = H // k.shape[0]
    k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d).astype(q.dtype)  # (H, S, S)
    scores = np.where(np.tril(np.ones((S, S), bool)), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    return (p / p.sum(axis=-1, keepdims=True)) @ v                  # (H, S, d)


def llama_forward(ids, weights, H, HKV, head_dim, base, eps,
                  rope="interleaved", dtype=np.float64):
    """Logits (S, V) for one sequence of ids, computed in ``dtype``."""
    turn = {"interleaved": rope_interleaved, "half": rope_half}[rope]
    w = {k: v for k, v in weights.items() if k != "layers"}
    cast = lambda a: np.asarray(a, dtype)  # noqa: E731
    x = cast(w["emb"])[np.asarray(ids)]                                # (S, D)
    S = x.shape[0]
    for layer in weights["layers"]:
        L = {k: cast(v) for k, v in layer.items()}
        n = rms_norm(x, L["attn_norm"], eps)
        q = (n @ L["q"].T).reshape(S, H, head_dim).transpose(1, 0, 2)
        k = (n @ L["k"].T).reshape(S, HKV, head_dim).transpose(1, 0, 2)
        v = (n @ L["v"].T).reshape(S, HKV, head_dim).transpose(1, 0, 2)
        o = attention(turn(q, base), turn(k, base), v)                 # (H, S, d)
        h = x + o.transpose(1, 0, 2).reshape(S, H * head_dim) @ L["o"].T
        n = rms_norm(h, L["ffn_norm"], eps)
        x = h + (silu(n @ L["gate"].T) * (n @ L["up"].T)) @ L["down"].T
    head = w["emb"] if w.get("head") is None else w["head"]
    return rms_norm(x, cast(w["norm"]), eps) @ cast(head).T            # (S, V)
