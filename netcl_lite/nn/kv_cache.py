"""``KVCache``: keep every layer's keys and values so that generation feeds
one new token per step instead of the whole sequence (chapter 09).

Without a cache, step t recomputes k and v for all t positions, in every
layer: O(t) work per token for the projections, O(t^2) over a sequence.
RoPE makes a cache easy: a key is rotated by its own absolute position
once, when it is computed, and never changes afterwards. So a step only
projects the new token, rotates it at ``offset = cache.length``, appends
its k and v (``F.concat`` along the positions) and attends over the
whole cached past. The causal mask is aligned bottom-right: the new query
(row i of Sq) sees key j iff j <= i + (Sk - Sq).

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> cache = KVCache(n_layers=1)
>>> k = Tensor.from_host(queue, np.zeros((1, 2, 3, 4)))   # (B, HKV, S, d_k)
>>> k_all, v_all = cache.layers[0].append(k, k)
>>> k_all, v_all = cache.layers[0].append(k, k)           # 3 more positions
>>> k_all.shape, cache.length
((1, 2, 6, 4), 6)

The cache is for inference only: inside an open ``Tape`` it refuses to
run, since gradients do not flow through stored keys and values.

Sliding-window attention (``RotaryAttention(window=W)``) needs nothing
more from the cache: the new rows are the last of the keys, so the mask
stays bottom-right aligned, and new query i at position p sees the cached
keys p - W < j <= p. The attention kernels (and ``FusedDecoder``'s) never
read the older keys. The cache still keeps them: generation stops at
max_seq_len, so dropping them would save at most max_seq_len - W rows per
layer, and the fused decoder copies the whole prompt from here.
"""

import netcl_lite.functional as F
from netcl_lite.autograd import as_node, is_recording
from netcl_lite.core.validate import check_int


class LayerCache:
    """The keys and values one attention layer has seen so far."""

    def __init__(self):
        self.k = None  # Tensor (B, HKV, S, d_k) or None while empty
        self.v = None

    @property
    def length(self):
        return 0 if self.k is None else self.k.shape[2]

    def append(self, k, v):
        """Add the new positions; returns all keys and values as constants."""
        if is_recording():
            raise ValueError(
                "KVCache is for inference: close the Tape first "
                "(gradients do not flow through cached keys and values)"
            )
        k, v = as_node(k).value, as_node(v).value  # (B, HKV, Sn, d_k)
        if len(k.shape) != 4 or k.shape != v.shape:
            raise ValueError(
                f"KVCache: k and v must be (B, HKV, S, d_k) of one shape, got "
                f"k {k.shape} and v {v.shape}"
            )
        if self.k is None:
            self.k, self.v = k, v
        else:
            old = self.k.shape
            if (old[0], old[1], old[3]) != (k.shape[0], k.shape[1], k.shape[3]):
                raise ValueError(
                    f"KVCache: new k {k.shape} does not extend the cached "
                    f"{old} (B, HKV and d_k must match)"
                )
            self.k = F.concat(self.k, k, axis=2).value  # (B, HKV, S + Sn, d_k)
            self.v = F.concat(self.v, v, axis=2).value  # (B, HKV, S + Sn, d_k)
        return as_node(self.k), as_node(self.v)


class KVCache:
    """One ``LayerCache`` per decoder block; all advance together."""

    def __init__(self, n_layers):
        check_int(n_layers, "KVCache", "n_layers", low=1, what="positive")
        self.layers = [LayerCache() for _ in range(n_layers)]

    @property
    def length(self):
        """Positions cached so far (the offset of the next token)."""
        return self.layers[0].length

    def reset(self):
        for layer in self.layers:
            layer.k = layer.v = None
