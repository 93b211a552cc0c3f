"""numpy references: SwiGLU, rotary attention, the decoder block and the
decoder LM (chapter 09), float64, composed from the layer references.

Parameters come as a dict named like ``Module.named_parameters()``.
"""

from numpy_ref.attention import scaled_dot_product_attention
from numpy_ref.layers import repeat_kv, rms_norm, rope, silu


def swiglu(x, w_gate, w_up, w_down):
    return (silu(x @ w_gate) * (x @ w_up)) @ w_down


def rotary_attention(x, wq, wk, wv, wo, H, HKV, base=10000.0, offset=0,
                     rope_scale=1.0, scale=None):
    B, S, _ = x.shape
    d_k = wq.shape[1] // H

    def heads(y, n):
        return y.reshape(B, S, n, d_k).transpose(0, 2, 1, 3)  # (B, n, S, d_k)

    q = rope(heads(x @ wq, H), base, offset, rope_scale)
    k = rope(heads(x @ wk, HKV), base, offset, rope_scale)
    v = heads(x @ wv, HKV)
    k, v = repeat_kv(k, H // HKV), repeat_kv(v, H // HKV)   # (B, H, S, d_k)
    o = scaled_dot_product_attention(q, k, v, True, scale)  # (B, H, S, d_k)
    return o.transpose(0, 2, 1, 3).reshape(B, S, H * d_k) @ wo


def decoder_block(x, p, H, HKV, base=10000.0, eps=1e-6, prefix="",
                  rope_scale=1.0, scale=None):
    """x + attn(norm(x)), then h + ffn(norm(h))."""
    def w(name):
        return p[prefix + name]

    a = rotary_attention(rms_norm(x, w("attn_norm.weight"), eps),
                         w("attn.wq"), w("attn.wk"), w("attn.wv"), w("attn.wo"),
                         H, HKV, base, 0, rope_scale, scale)
    h = x + a
    f = swiglu(rms_norm(h, w("ffn_norm.weight"), eps),
               w("ffn.w_gate"), w("ffn.w_up"), w("ffn.w_down"))
    return h + f


def decoder_lm(ids, p, n_layers, H, HKV, base=10000.0, eps=1e-6,
               rope_scale=1.0, scale=None):
    """Logits (B, S, V) of the whole model."""
    x = p["tok_emb.weight"][ids]                              # (B, S, D)
    for i in range(n_layers):
        x = decoder_block(x, p, H, HKV, base, eps, f"blocks.{i}.", rope_scale,
                          scale)
    return rms_norm(x, p["norm.weight"], eps) @ p["head.weight"]
