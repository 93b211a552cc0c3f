"""A numpy forward pass of DecoderLM that records every named activation
(float64), and can replace any of them: the independent computation the
interpretability tools are checked against. Written here, from the
formulas, with the layer references of tests/numpy_ref for RoPE and
RMSNorm."""

import numpy as np

from netcl_lite.nn import DecoderConfig, DecoderLM
from numpy_ref.layers import rms_norm, rope, silu


def tiny(queue, H=4, HKV=2, attn_only=False, seed=0, **options):
    """A small model with every kind of activation: 2 layers, dim 4 H."""
    cfg = dict(vocab_size=23, dim=4 * H, n_layers=2, n_heads=H, n_kv_heads=HKV,
               max_seq_len=12, attn_only=attn_only, seed=seed, hidden_dim=24)
    cfg.update(options)
    return DecoderLM(queue, DecoderConfig(**cfg))


def params(model):
    """{parameter name: float64 array} of a model."""
    return {name: p.value.to_host().astype(np.float64)
            for name, p in model.named_parameters()}


def forward(model, ids, replace=None):
    """(logits (B, S, V), {name: activation}) with ``replace[name](array)``
    used in place of each named activation it lists."""
    replace = replace or {}
    p, c = params(model), model.config
    acts = {}

    def visit(name, value):
        if name in replace:
            value = np.asarray(replace[name](value.copy()), np.float64)
        acts[name] = value
        return value

    ids = np.asarray(ids)
    x = p["tok_emb.weight"][ids]                                 # (B, S, D)
    B, S, D = x.shape
    for i, block in enumerate(model.blocks):
        w = {k[len(f"blocks.{i}."):]: v for k, v in p.items()
             if k.startswith(f"blocks.{i}.")}
        attn = block.attn
        H, HKV, hd = attn.n_heads, attn.n_kv_heads, attn.head_dim
        x = visit(f"blocks.{i}.resid_pre", x)
        n = rms_norm(x, w["attn_norm.weight"], c.norm_eps)
        q = (n @ w["attn.wq"]).reshape(B, S, H, hd).transpose(0, 2, 1, 3)
        k = (n @ w["attn.wk"]).reshape(B, S, HKV, hd).transpose(0, 2, 1, 3)
        v = (n @ w["attn.wv"]).reshape(B, S, HKV, hd).transpose(0, 2, 1, 3)
        q, k = rope(q, c.rope_base), rope(k, c.rope_base)
        k, v = np.repeat(k, H // HKV, axis=1), np.repeat(v, H // HKV, axis=1)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)      # (B, H, S, S)
        future = np.triu(np.ones((S, S), dtype=bool), 1)
        scores = np.where(future, -np.inf, scores)
        A = np.exp(scores - scores.max(-1, keepdims=True))
        A = visit(f"blocks.{i}.attn.pattern", A / A.sum(-1, keepdims=True))
        z = visit(f"blocks.{i}.attn.z", (A @ v).transpose(0, 2, 1, 3))
        a = visit(f"blocks.{i}.attn_out", z.reshape(B, S, H * hd) @ w["attn.wo"])
        h = x + a
        if block.ffn is not None:
            m = rms_norm(h, w["ffn_norm.weight"], c.norm_eps)
            m = (silu(m @ w["ffn.w_gate"]) * (m @ w["ffn.w_up"])) @ w["ffn.w_down"]
            h = h + visit(f"blocks.{i}.mlp_out", m)
        x = visit(f"blocks.{i}.resid_post", h)
    x = visit("ln_final.input", x)
    scale = visit("ln_final.scale",
                  1.0 / np.sqrt(np.mean(x * x, -1, keepdims=True) + c.norm_eps))
    logits = (x * scale * p["norm.weight"]) @ p["head.weight"]
    return logits, acts
