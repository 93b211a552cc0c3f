"""``RotaryAttention``: multi-head attention with RoPE and grouped kv heads.

Section 6 of the chapter document runs this module:

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> attn = RotaryAttention(queue, dim=256, n_heads=4, n_kv_heads=4, max_seq_len=512)
>>> x = Tensor.from_host(queue, np.zeros((2, 16, 256)))
>>> attn(x).value.shape
(2, 16, 256)

Parameters: ``wq`` (dim, H*d_k), ``wk`` and ``wv`` (dim, HKV*d_k), ``wo``
(H*d_k, dim) with d_k = dim // H, or ``head_dim`` when given (a width of its
own, as some real models have). Query head h reads kv head h // (H // HKV).

``rope_scale`` multiplies every position before it turns q and k: 1 is plain
RoPE, 1/4 is position interpolation to four times the trained length, 0 is
no position encoding at all (chapters 11 and 12). ``scale`` replaces the
1/sqrt(d_k) on the scores when given. ``window`` W makes it sliding-window
attention (Mistral's): each query sees only its last W keys, itself
included, with or without a KV cache:

>>> local = RotaryAttention(queue, dim=8, n_heads=2, n_kv_heads=1,
...                         max_seq_len=16, window=3)
>>> A = local.attention_map(Tensor.from_host(queue, np.ones((1, 6, 8))))
>>> (A.value.to_host()[0, 0] > 0).sum(axis=1)      # keys seen per query
array([1, 2, 3, 3, 3, 3])
"""

import netcl_lite.functional as F
from netcl_lite.nn.attention import MultiHeadAttention


class RotaryAttention(MultiHeadAttention):
    def __init__(self, queue, dim, n_heads, n_kv_heads, max_seq_len,
                 base=10000.0, causal=True, seed=0, rope_scale=1.0, scale=None,
                 window=None, head_dim=None):
        super().__init__(queue, dim, n_heads, causal=causal, seed=seed,
                         n_kv_heads=n_kv_heads, scale=scale, window=window,
                         head_dim=head_dim)
        if self.head_dim % 2:
            how = f"dim {dim} / n_heads {n_heads}" if head_dim is None \
                else "head_dim"
            raise ValueError(
                f"RoPE rotates pairs, so the head dim must be even; "
                f"{how} = {self.head_dim}"
            )
        if max_seq_len <= 0:
            raise ValueError(f"max_seq_len must be positive, got {max_seq_len}")
        self.max_seq_len, self.base = max_seq_len, float(base)
        self.rope_scale = float(rope_scale)

    def check_input(self, x, offset=0):
        super().check_input(x, offset)
        S = x.shape[1]
        if offset < 0 or offset + S > self.max_seq_len:
            raise ValueError(
                f"sequence positions {offset}..{offset + S - 1} exceed "
                f"max_seq_len {self.max_seq_len} (S = {S}, offset = {offset})"
            )

    def rotate(self, x, offset):
        return F.rope(x, base=self.base, offset=offset,
                      scale=self.rope_scale)             # (B, n, S, d_k)
