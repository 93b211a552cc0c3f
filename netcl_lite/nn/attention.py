"""``MultiHeadAttention``: H heads of scaled dot-product attention.

    x (B, S, D) -> q, k, v -> split heads -> attention per head -> merge -> W_O

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> mha = MultiHeadAttention(queue, dim=8, n_heads=2)
>>> mha(Tensor.from_host(queue, np.zeros((1, 5, 8)))).shape
(1, 5, 8)

``RotaryAttention`` (nn/transformer.py) is the same path plus RoPE on q and
k and fewer kv heads (GQA); the two variations are marked below.

Head masks: ``forward(x, head_mask=m)`` multiplies head h's output by
``m[h]`` before W_O. A 0 removes the head (a zero ablation), 1 keeps it.
To replace a head's output by its mean or by its output on another input,
use the named activation ``blocks.{l}.attn.z`` instead (nn/hooks.py;
``netcl_lite.interp.mean_ablation``, chapter 10). A list of H floats is a
constant; a (H,) leaf node
(``ag.tensor``) gets a gradient, d loss / d m[h], the attribution of the
loss to head h. Gradients reach x and the weights through the mask either
way:

>>> import netcl_lite.autograd as ag
>>> x = Tensor.from_host(queue, np.random.default_rng(0).normal(size=(1, 5, 8)))
>>> full = mha(x).value.to_host()
>>> only_0 = mha(x, head_mask=[1.0, 0.0]).value.to_host()
>>> only_1 = mha(x, head_mask=[0.0, 1.0]).value.to_host()
>>> bool(np.allclose(only_0 + only_1, full, atol=1e-6))  # W_O is linear
True
>>> with ag.Tape() as tape:
...     m = ag.tensor(Tensor.from_host(queue, np.ones(2)))
...     loss = F.sum(mha(x, head_mask=m))
>>> tape.backward(loss)
>>> m.grad.shape
(2,)
>>> mha(x, head_mask=[1.0, 0.0, 1.0])
Traceback (most recent call last):
...
ValueError: head_mask: expected 2 floats (one per head), got shape (3,): [1.0, 0.0, 1.0]
"""

import math

import numpy as np

import netcl_lite.functional as F
from netcl_lite.autograd import Node, as_node
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_int, same_queue
from netcl_lite.functional.flash_attention import check_window, score_scale
from netcl_lite.nn import hooks
from netcl_lite.nn.linear import apply_weight
from netcl_lite.nn.module import Module, normal_init, parameter


def _positive(**sizes):
    for name, value in sizes.items():
        check_int(value, "", name, low=1)


class MultiHeadAttention(Module):
    def __init__(self, queue, dim, n_heads, causal=True, seed=0, n_kv_heads=None,
                 scale=None, window=None, head_dim=None):
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        _positive(dim=dim, n_heads=n_heads, n_kv_heads=n_kv_heads)
        if head_dim is not None:  # a width of its own (real models have one)
            _positive(head_dim=head_dim)
        elif dim % n_heads:
            raise ValueError(
                f"dim {dim} is not divisible by n_heads {n_heads} "
                f"({dim} % {n_heads} = {dim % n_heads})"
            )
        if n_heads % n_kv_heads:
            raise ValueError(
                f"n_heads {n_heads} is not divisible by n_kv_heads {n_kv_heads}"
            )
        self.dim, self.n_heads, self.n_kv_heads = dim, n_heads, n_kv_heads
        self.head_dim = dim // n_heads if head_dim is None else int(head_dim)
        self.queue = queue
        self.causal = causal
        # the factor on q k^T; None: 1/sqrt(head_dim) (chapter 11 ablates it)
        self.scale = scale
        if scale is not None:
            score_scale(self.head_dim, scale, type(self).__name__)  # checks it
        # sliding-window attention: each query sees its last `window` keys,
        # itself included (None: all of them; F.scaled_dot_product_attention)
        self.window = window
        check_window(window, causal, 1, type(self).__name__)        # checks it
        hd, kv = self.head_dim, n_kv_heads * self.head_dim
        rng = np.random.default_rng(seed)  # one stream, drawn in a fixed order
        self.wq = parameter(queue, normal_init(rng, dim, (dim, n_heads * hd)), "wq")
        self.wk = parameter(queue, normal_init(rng, dim, (dim, kv)), "wk")
        self.wv = parameter(queue, normal_init(rng, dim, (dim, kv)), "wv")
        self.wo = parameter(queue, normal_init(rng, n_heads * hd,
                                               (n_heads * hd, dim)), "wo")

    def check_input(self, x, offset=0):
        """Shape checks before any kernel runs."""
        if len(x.shape) != 3 or x.shape[-1] != self.dim:
            raise ValueError(
                f"{type(self).__name__} expects x of shape (B, S, {self.dim}), "
                f"got {x.shape}"
            )

    @staticmethod
    def position(offset, cache):
        """The first position of x: ``offset``, else the cache's length, else 0.

        With a cache the new tokens follow the cached ones, so an explicit
        offset must equal ``cache.length``.
        """
        if offset is None:
            return 0 if cache is None else cache.length
        check_int(offset, "", "offset")
        if cache is not None and offset != cache.length:
            raise ValueError(
                f"offset {offset} does not follow the cache, which holds "
                f"{cache.length} positions (leave offset out to use them)"
            )
        return int(offset)

    def rotate(self, x, offset):
        """Position encoding hook: none here; RotaryAttention applies RoPE."""
        return x

    def split_heads(self, x, n):
        B, S, _ = x.shape
        x = F.reshape(x, (B, S, n, self.head_dim))  # (B, S, n, d_k)
        return F.transpose(x, 1, 2)                 # (B, n, S, d_k)

    def project(self, x, offset=0):
        """x (B, S, D) -> the heads q (B, H, S, d_k), k and v (B, HKV, S, d_k),
        position-encoded: what ``forward`` and ``attention_map`` attend with."""
        H, HKV = self.n_heads, self.n_kv_heads
        q = self.split_heads(apply_weight(x, self.wq), H)    # (B, H, S, d_k)
        k = self.split_heads(apply_weight(x, self.wk), HKV)  # (B, HKV, S, d_k)
        v = self.split_heads(apply_weight(x, self.wv), HKV)  # (B, HKV, S, d_k)
        return self.rotate(q, offset), self.rotate(k, offset), v

    def attention_map(self, x):
        """The weights A (B, H, S, S) that ``forward(x)`` applies to v.

        The fused kernel never stores them, so they are recomputed from the
        same projections with ``F.attention_weights``."""
        x = as_node(x)
        self.check_input(x)
        q, k, _ = self.project(x)
        k = F.repeat_kv(k, self.n_heads // self.n_kv_heads)  # (B, H, S, d_k)
        return F.attention_weights(q, k, causal=self.causal, scale=self.scale,
                                   window=self.window)            # (B, H, S, S)

    def head_weights(self, head_mask, what="head_mask"):
        """``head_mask`` as a (H,) node, checked before any kernel; None stays
        None. H floats (list, tuple, numpy) become a constant; a Tensor is a
        constant, a node keeps its ``requires_grad``. Wrong length, a
        non-finite value or a non-number is a ValueError naming it."""
        if head_mask is None:
            return None
        H = self.n_heads
        node = head_mask if isinstance(head_mask, Node) else None
        if node is None and isinstance(head_mask, Tensor):
            node = as_node(head_mask)
        if node is not None:
            same_queue(node.value, self.queue, what, "the mask",
                       "the layer's weights")
            if node.dtype != np.float32:
                raise ValueError(f"{what}: a mask node must be float32, got "
                                 f"{node.dtype}")
            values = node.value.to_host()                # H floats: a copy
        else:
            try:
                values = np.asarray(head_mask)
            except (TypeError, ValueError):              # ragged lists
                values = np.asarray(None)
            if values.dtype.kind not in "fiu":  # no bools, strings, objects
                raise ValueError(f"{what}: expected {H} floats, got "
                                 f"{head_mask!r}")
            values = values.astype(np.float64)
        if values.shape != (H,):
            shown = np.asarray(values).tolist()
            raise ValueError(f"{what}: expected {H} floats (one per head), got "
                             f"shape {values.shape}: {shown}")
        bad = [float(v) for v in values if not math.isfinite(float(v))]
        if bad:
            raise ValueError(f"{what}: every value must be finite, got "
                             f"{bad[0]} in {values.tolist()}")
        if node is None:
            node = as_node(Tensor.from_host(self.queue,
                                            values.astype(np.float32)))
        return node

    def mask_heads(self, o, mask):
        """o (B, S, H d_k), the merged heads, times mask[h] on head h's d_k
        columns. The (H,) mask is spread out by two products with ones,
        (H, 1) x (1, d_k) and (B, S, 1) x (1, H d_k), so that its gradient
        is their backward: a sum over every position and column of a head."""
        B, S, _ = o.shape
        H, d_k, queue = self.n_heads, self.head_dim, o.queue
        cols = F.matmul(F.reshape(mask, (H, 1)),
                        Tensor.from_host(queue, np.ones((1, d_k))))  # (H, d_k)
        cols = F.reshape(cols, (1, H * d_k))                         # (1, H d_k)
        ones = Tensor.from_host(queue, np.ones((B, S, 1)))           # (B, S, 1)
        return F.mul(o, F.matmul(ones, cols))                        # (B, S, H d_k)

    def forward(self, x, offset=None, cache=None, head_mask=None):
        """x (B, S, D) at positions offset.. (default: after the cache's);
        head_mask: H floats or a (H,) node, head h's output times
        head_mask[h] before W_O (``head_weights`` checks it)."""
        x = as_node(x)
        offset = self.position(offset, cache)
        self.check_input(x, offset)
        mask = self.head_weights(head_mask)
        B, S, _ = x.shape
        H = self.n_heads
        q, k, v = self.project(x, offset)                # (B, H|HKV, S, d_k)
        if cache is not None:  # KV-cache (nn/kv_cache.py): past k, v first
            k, v = cache.append(k, v)                    # (B, HKV, Sk, d_k)
        # GQA: each kv head serves H // HKV query heads (a no-op when H == HKV);
        # the fused kernel reads kv head h // (H // HKV) itself, no copies.
        # The op picks the kernel, a decoding step's few rows included (the
        # table in F.scaled_dot_product_attention's docstring)
        # named activations (nn/hooks.py): None unless a hook needs A itself
        o = hooks.pattern(self, q, k, v)                 # (B, H, S, d_k)
        if o is None:
            o = F.scaled_dot_product_attention(q, k, v, causal=self.causal,
                                               scale=self.scale,
                                               window=self.window)
        o = F.transpose(o, 1, 2)                         # (B, S, H, d_k)
        o = hooks.point(self, "z", o)                    # each head's output
        o = F.reshape(o, (B, S, H * self.head_dim))      # (B, S, H d_k)
        if mask is not None:
            o = self.mask_heads(o, mask)                 # (B, S, H d_k)
        return apply_weight(o, self.wo)                  # (B, S, D)
