"""``DecoderBlock``: one layer of a LLaMA-style decoder (chapter 09).

    h   = x + Attention(RMSNorm(x))          # tokens read from each other
    out = h + SwiGLU(RMSNorm(h))             # each token thinks alone

Pre-norm: each sub-layer sees a normalised copy of the residual stream and
adds its answer back, so the stream itself is never rescaled and gradients
reach early layers through the identity paths. The attention is
``RotaryAttention`` (RoPE on q and k, grouped kv heads).

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> block = DecoderBlock(queue, dim=16, n_heads=4, n_kv_heads=2, max_seq_len=8,
...                      hidden_dim=40)
>>> block(Tensor.from_host(queue, np.ones((2, 5, 16)))).shape  # (B, S, D)
(2, 5, 16)
>>> [name for name, _ in block.named_parameters()][:3]
['attn_norm.weight', 'attn.wq', 'attn.wk']
"""

import netcl_lite.functional as F
from netcl_lite.autograd import as_node
from netcl_lite.nn.feed_forward import SwiGLU
from netcl_lite.nn.hooks import point
from netcl_lite.nn.module import Module
from netcl_lite.nn.norm import RMSNorm
from netcl_lite.nn.transformer import RotaryAttention


class DecoderBlock(Module):
    def __init__(self, queue, dim, n_heads, n_kv_heads, max_seq_len, hidden_dim,
                 base=10000.0, eps=1e-6, seed=0, rope_scale=1.0, attn_scale=None,
                 window=None, head_dim=None, mlp=True):
        self.attn_norm = RMSNorm(queue, dim, eps)
        self.attn = RotaryAttention(queue, dim, n_heads, n_kv_heads, max_seq_len,
                                    base=base, seed=seed, rope_scale=rope_scale,
                                    scale=attn_scale, window=window,
                                    head_dim=head_dim)
        # mlp=False: attention only, out = h (chapter 10's model)
        self.ffn_norm = RMSNorm(queue, dim, eps) if mlp else None
        self.ffn = SwiGLU(queue, dim, hidden_dim, seed=seed + 1) if mlp else None

    def forward(self, x, offset=None, cache=None, head_mask=None):
        """x (B, S, D) at positions offset.. -> (B, S, D); cache: a LayerCache.

        offset defaults to the cache's length (0 without a cache);
        head_mask: H floats for the attention's heads (``RotaryAttention``)."""
        x = as_node(x)
        offset = self.attn.position(offset, cache)
        self.attn.check_input(x, offset)  # shapes and positions, before any kernel
        mask = self.attn.head_weights(head_mask)
        x = point(self, "resid_pre", x)   # named activations: nn/hooks.py
        a = self.attn(self.attn_norm(x), offset=offset, cache=cache,
                      head_mask=mask)
        h = F.add(x, point(self, "attn_out", a))       # (B, S, D) residual
        if self.ffn is None:
            return point(self, "resid_post", h)
        m = point(self, "mlp_out", self.ffn(self.ffn_norm(h)))
        return point(self, "resid_post", F.add(h, m))  # (B, S, D) residual
