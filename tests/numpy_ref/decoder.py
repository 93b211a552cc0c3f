"""numpy references: SwiGLU, rotary attention, the decoder block and the
decoder LM (chapter 09), float64, composed from the layer references.

Parameters come as a dict named like ``Module.named_parameters()``.
"""

import numpy as np

from numpy_ref.attention import (scaled_dot_product_attention,
                                 scaled_dot_product_attention_vjp)
from numpy_ref.layers import repeat_kv, repeat_kv_vjp, rms_norm, rope, rope_vjp, silu


def swiglu(x, w_gate, w_up, w_down):
    return (silu(x @ w_gate) * (x @ w_up)) @ w_down


def _heads(y, n, d_k):
    B, S, _ = y.shape
    return y.reshape(B, S, n, d_k).transpose(0, 2, 1, 3)      # (B, n, S, d_k)


def _merge(y):
    B, n, S, d_k = y.shape
    return y.transpose(0, 2, 1, 3).reshape(B, S, n * d_k)     # (B, S, n d_k)


def _per_head(head_mask, H):
    """The mask as (1, H, 1, 1); None: ones."""
    m = np.ones(H) if head_mask is None else np.asarray(head_mask, np.float64)
    return m[None, :, None, None]


def rotary_attention(x, wq, wk, wv, wo, H, HKV, base=10000.0, offset=0,
                     rope_scale=1.0, scale=None, head_mask=None, window=None):
    """head_mask: H floats, head h's output times head_mask[h] before wo."""
    d_k = wq.shape[1] // H
    q = rope(_heads(x @ wq, H, d_k), base, offset, rope_scale)
    k = rope(_heads(x @ wk, HKV, d_k), base, offset, rope_scale)
    v = _heads(x @ wv, HKV, d_k)
    k, v = repeat_kv(k, H // HKV), repeat_kv(v, H // HKV)   # (B, H, S, d_k)
    o = scaled_dot_product_attention(q, k, v, True, scale, window)  # (B, H, S, d_k)
    return _merge(o * _per_head(head_mask, H)) @ wo


def rotary_attention_vjp(x, wq, wk, wv, wo, H, HKV, g, base=10000.0, offset=0,
                         rope_scale=1.0, scale=None, head_mask=None,
                         window=None):
    """[grad_x, grad_head_mask] of sum(rotary_attention(...) * g)."""
    d_k, rep = wq.shape[1] // H, H // HKV
    qh, kh = _heads(x @ wq, H, d_k), _heads(x @ wk, HKV, d_k)
    q, k = rope(qh, base, offset, rope_scale), rope(kh, base, offset, rope_scale)
    v = _heads(x @ wv, HKV, d_k)
    kr, vr = repeat_kv(k, rep), repeat_kv(v, rep)            # (B, H, S, d_k)
    o = scaled_dot_product_attention(q, kr, vr, True, scale, window)
    gm = _heads(g @ wo.T, H, d_k)                  # d loss / d (o * mask)
    g_mask = np.sum(gm * o, axis=(0, 2, 3))                 # (H,)
    go = gm * _per_head(head_mask, H)                       # (B, H, S, d_k)
    gq, gkr, gvr = scaled_dot_product_attention_vjp(q, kr, vr, go, True, scale,
                                                    window)
    gk, gv = repeat_kv_vjp(k, rep, gkr)[0], repeat_kv_vjp(v, rep, gvr)[0]
    gqh = rope_vjp(qh, gq, base, offset, rope_scale)[0]
    gkh = rope_vjp(kh, gk, base, offset, rope_scale)[0]
    gx = _merge(gqh) @ wq.T + _merge(gkh) @ wk.T + _merge(gv) @ wv.T
    return [gx, g_mask]


def decoder_block(x, p, H, HKV, base=10000.0, eps=1e-6, prefix="",
                  rope_scale=1.0, scale=None, head_mask=None, window=None):
    """x + attn(norm(x)), then h + ffn(norm(h))."""
    def w(name):
        return p[prefix + name]

    a = rotary_attention(rms_norm(x, w("attn_norm.weight"), eps),
                         w("attn.wq"), w("attn.wk"), w("attn.wv"), w("attn.wo"),
                         H, HKV, base, 0, rope_scale, scale, head_mask, window)
    h = x + a
    f = swiglu(rms_norm(h, w("ffn_norm.weight"), eps),
               w("ffn.w_gate"), w("ffn.w_up"), w("ffn.w_down"))
    return h + f


def decoder_lm(ids, p, n_layers, H, HKV, base=10000.0, eps=1e-6,
               rope_scale=1.0, scale=None, head_mask=None, window=None):
    """Logits (B, S, V) of the whole model; head_mask {layer: H floats}.
    Without ``head.weight`` the head is tied: the embedding table, (V, D)^T."""
    head_mask = head_mask or {}
    x = p["tok_emb.weight"][ids]                              # (B, S, D)
    for i in range(n_layers):
        x = decoder_block(x, p, H, HKV, base, eps, f"blocks.{i}.", rope_scale,
                          scale, head_mask.get(i), window)
    head = p["head.weight"] if "head.weight" in p else p["tok_emb.weight"].T
    return rms_norm(x, p["norm.weight"], eps) @ head
