"""``KVCache``: keep every layer's keys and values so that generation feeds
one new token per step instead of the whole sequence (chapter 09).

Without a cache, step t recomputes k and v for all t positions, in every
layer: O(t) work per token for the projections, O(t^2) over a sequence.
RoPE makes a cache easy: a key is rotated by its own absolute position
once, when it is computed, and never changes afterwards. So a step only
projects the new token, rotates it at ``offset = cache.length``, appends
its k and v (``kernels/concat.cl:concat_forward``) and attends over the
whole cached past. The causal mask is aligned bottom-right: the new query
(row i of Sq) sees key j iff j <= i + (Sk - Sq).

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> cache = KVCache(n_layers=1)
>>> k = Tensor.from_host(queue, np.zeros((1, 2, 3, 4)))   # (B, HKV, S, Dh)
>>> k_all, v_all = cache.layers[0].append(k, k)
>>> k_all, v_all = cache.layers[0].append(k, k)           # 3 more positions
>>> k_all.shape, cache.length
((1, 2, 6, 4), 6)

The cache is for inference only: inside an open ``Tape`` it refuses to
run, since gradients do not flow through stored keys and values.
"""

import netcl_lite.autograd as ag
from netcl_lite.autograd import as_node
from netcl_lite.core.program import LOCAL_2D, launch
from netcl_lite.core.tensor import Tensor


def concat_positions(past, new):
    """(B, HKV, Sp, Dh) + (B, HKV, Sn, Dh) -> (B, HKV, Sp + Sn, Dh)."""
    B, HKV, Sp, Dh = past.shape
    Sn = new.shape[2]
    R = B * HKV                                   # rows: one per (batch, head)
    out = Tensor.empty(past.queue, (B, HKV, Sp + Sn, Dh))
    W = (Sp + Sn) * Dh                            # columns: a row's (S, Dh)
    launch(past.queue, "concat", "concat_forward", (W, R), LOCAL_2D,
           past, new, out, R, Sp * Dh, Sn * Dh)
    return out


class LayerCache:
    """The keys and values one attention layer has seen so far."""

    def __init__(self):
        self.k = None  # Tensor (B, HKV, S, Dh) or None while empty
        self.v = None

    @property
    def length(self):
        return 0 if self.k is None else self.k.shape[2]

    def append(self, k, v):
        """Add the new positions; returns all keys and values as constants."""
        if ag._active:
            raise ValueError(
                "KVCache is for inference: close the Tape first "
                "(gradients do not flow through cached keys and values)"
            )
        k, v = as_node(k).value, as_node(v).value  # (B, HKV, Sn, Dh)
        if len(k.shape) != 4 or k.shape != v.shape:
            raise ValueError(
                f"KVCache: k and v must be (B, HKV, S, Dh) of one shape, got "
                f"k {k.shape} and v {v.shape}"
            )
        if self.k is None:
            self.k, self.v = k, v
        else:
            old = self.k.shape
            if (old[0], old[1], old[3]) != (k.shape[0], k.shape[1], k.shape[3]):
                raise ValueError(
                    f"KVCache: new k {k.shape} does not extend the cached "
                    f"{old} (B, HKV and Dh must match)"
                )
            self.k = concat_positions(self.k, k)       # (B, HKV, S + Sn, Dh)
            self.v = concat_positions(self.v, v)       # (B, HKV, S + Sn, Dh)
        return as_node(self.k), as_node(self.v)


class KVCache:
    """One ``LayerCache`` per decoder block; all advance together."""

    def __init__(self, n_layers):
        if not isinstance(n_layers, int) or n_layers <= 0:
            raise ValueError(f"KVCache: n_layers must be positive, got {n_layers!r}")
        self.layers = [LayerCache() for _ in range(n_layers)]

    @property
    def length(self):
        """Positions cached so far (the offset of the next token)."""
        return self.layers[0].length

    def reset(self):
        for layer in self.layers:
            layer.k = layer.v = None
