"""``QuantizedDecoder``: KV-cache generation for a decoder whose matrices
stay in their GGUF blocks (chapter 14's SmolLM2), one token per step in 5
launches per layer plus 4 (``kernels/decode_quant.cl``, launched by
``decode_quant.py``).

``FusedDecoder`` (``decoder.py``) is the float32 version: its kernels read
(in, out) float matrices, so a quantised model could only decode through
the ordinary layers, about twenty launches per layer, each allocating its
output and recording nothing useful. This decoder takes the same
``DecoderWeights`` with a ``QuantizedWeight`` (out, in) for every matrix,
the embedding table and the head (a tied head is the table itself), and
owns every buffer a step needs.

The cache grows with the text. It starts with room for the prompt and as
many positions again (at least 64), and doubles when full, up to
``max_seq_len``: a model that could read 8192 positions does not hold
8192 of them to write a sentence (SmolLM2: 377 MB). Doubling copies the
cached rows once (``decode.cl: decode_load_cache``), so n tokens cost at
most n copied rows in all.

A one-layer decoder of random Q8_0 matrices (D 32, 2 query heads and 1
kv head of 16, SwiGLU 64, 50 tokens), after a prompt of one position:

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.quantized import QuantizedWeight
>>> from netcl_lite.core.tensor import Tensor
>>> from netcl_lite.inference.decoder import DecoderWeights, LayerWeights
>>> queue = manager.default("cpu").queue
>>> rng = np.random.default_rng(0)
>>> def m(rows, cols):                       # (out, in), as a file stores it
...     w = rng.standard_normal((rows, cols)) / np.sqrt(cols)
...     return QuantizedWeight.from_float(queue, w, "Q8_0")
>>> g = Tensor.from_host(queue, np.ones(32))                  # norm gains
>>> layer = LayerWeights(g, 1e-5, m(32, 32), m(16, 32), m(16, 32),
...                      m(32, 32), g, 1e-5, m(64, 32), m(64, 32), m(32, 64))
>>> table = m(50, 32)                        # embedding and tied head
>>> weights = DecoderWeights(emb=table, layers=[layer], norm=g, norm_eps=1e-5,
...                          head=table, n_heads=2, n_kv_heads=1,
...                          max_seq_len=1000, rope_base=1e4, rope_scale=1.0)
>>> steps = QuantizedDecoder(weights, batch=1)
>>> kv = Tensor.from_host(queue, np.zeros((1, 1, 1, 16)))  # (B, HKV, P, d_k)
>>> steps.start([(kv, kv)])
>>> steps.T, steps.length           # room for 64 positions, 1 of them used
(64, 1)
>>> steps.step([7]).shape                     # token 7 at position 1: (B, V)
(1, 50)
"""

import pyopencl as cl

from netcl_lite.core.quantized import QuantizedWeight
from netcl_lite.core.tensor import INT, Tensor
from netcl_lite.functional.flash_attention import check_window, score_scale
from netcl_lite.functional.rope import rope_table
from netcl_lite.inference import decode as float_kernels   # attention, copies
from netcl_lite.inference import decode_quant as kernels   # decode_quant.cl
from netcl_lite.inference.decoder import check_batch, check_step

MIN_POSITIONS = 64    # the cache's first size, at least


def check_weights(w):
    """The shapes decode_quant.cl assumes, as a ValueError naming them."""
    for name in ("emb", "head"):
        if not isinstance(getattr(w, name), QuantizedWeight):
            raise ValueError(f"QuantizedDecoder: {name} must be a "
                             f"QuantizedWeight, got "
                             f"{type(getattr(w, name)).__name__}")
    V, D = w.emb.shape
    H, HKV = w.n_heads, w.n_kv_heads
    if not w.layers or H <= 0 or HKV <= 0 or H % HKV:
        raise ValueError(f"QuantizedDecoder: {len(w.layers)} layers, {H} query "
                         f"heads and {HKV} kv heads (need layers and H % HKV "
                         f"== 0)")
    dk, hidden = w.layers[0].wq.rows // H, w.layers[0].w_gate.rows
    if dk % 2 or dk * H != w.layers[0].wq.rows:
        raise ValueError(f"QuantizedDecoder: wq {w.layers[0].wq.shape} does not "
                         f"split into {H} heads of an even width (RoPE pairs)")
    want = dict(wq=(H * dk, D), wk=(HKV * dk, D), wv=(HKV * dk, D),
                wo=(D, H * dk), w_gate=(hidden, D), w_up=(hidden, D),
                w_down=(D, hidden))
    for i, layer in enumerate(w.layers):
        for name, shape in want.items():
            m = getattr(layer, name)
            if not isinstance(m, QuantizedWeight) or m.shape != shape:
                raise ValueError(f"QuantizedDecoder: layer {i}'s {name} is "
                                 f"{m!r}, expected a QuantizedWeight {shape}")
        for name in ("attn_norm", "ffn_norm"):
            if getattr(layer, name).shape != (D,):
                raise ValueError(f"QuantizedDecoder: layer {i}'s {name} is "
                                 f"{getattr(layer, name).shape}, expected ({D},)")
    if w.norm.shape != (D,) or w.head.shape != (V, D):
        raise ValueError(f"QuantizedDecoder: norm {w.norm.shape} and head "
                         f"{w.head.shape}, expected ({D},) and ({V}, {D})")


class QuantizedDecoder:
    """The decoding steps of one quantised decoder (``DecoderWeights`` of
    ``QuantizedWeight`` matrices) for ``batch`` sequences."""

    def __init__(self, weights, batch):
        check_batch(batch)
        check_weights(weights)
        w = self.weights = weights
        self.queue = q = w.emb.queue
        self.B, self.limit = int(batch), w.max_seq_len
        self.V, self.D = w.emb.shape
        self.H, self.HKV = w.n_heads, w.n_kv_heads
        self.dk = w.layers[0].wq.rows // self.H
        self.F = w.layers[0].w_gate.rows
        self.scale = score_scale(self.dk, w.scale)
        self.window = check_window(w.window, True, self.limit + 1,
                                   "QuantizedDecoder")
        B, D = self.B, self.D
        self.T = 0                                  # positions the cache holds
        self.caches = [(None, None) for _ in w.layers]
        self.table = None
        self.x = Tensor.empty(q, (B, D))            # the residual stream
        self.xn = Tensor.empty(q, (B, D))           # ... normalised
        self.xg = Tensor.empty(q, (B, D))           # ... times a norm's gain
        self.q = Tensor.empty(q, (B, self.H * self.dk))
        self.o = Tensor.empty(q, (B, self.H * self.dk))
        self.hidden = Tensor.empty(q, (B, self.F))
        self.logits = Tensor.empty(q, (B, self.V))
        self.ids = Tensor.empty(q, (B,), INT)       # this step's tokens
        self.length = 0                             # positions cached

    def _grow(self, T):
        """Room for T positions: new caches, the old rows copied in."""
        T = min(T, self.limit)
        shape = (self.B, self.HKV, T, self.dk)
        grown = []
        for k, v in self.caches:
            nk, nv = Tensor.empty(self.queue, shape), Tensor.empty(self.queue,
                                                                   shape)
            if self.length:
                for old, new in ((k, nk), (v, nv)):   # (R, T_old, d_k) rows
                    float_kernels.load_cache(old, new, self.B * self.HKV,
                                             self.length, T, self.dk)
            grown.append((nk, nv))
        self.caches, self.T = grown, T
        self.scores = Tensor.empty(self.queue, (self.B * self.H, T))  # scratch
        self.table = rope_table(self.queue, T, self.dk // 2,
                                self.weights.rope_base, 0,
                                self.weights.rope_scale)   # (T, d_k / 2, 2)

    def start(self, kv):
        """Take over the keys and values a prompt's forward computed: one
        (k, v) pair per layer, each (B, HKV, P, d_k)."""
        if len(kv) != len(self.caches):
            raise ValueError(f"QuantizedDecoder: the cache has {len(kv)} "
                             f"layers, the model {len(self.caches)}")
        P = 0 if not kv or kv[0][0] is None else kv[0][0].shape[2]
        want = (self.B, self.HKV, P, self.dk)
        for pair in kv:
            for name, src in zip(("k", "v"), pair):
                if src is None or src.shape != want or P >= self.limit:
                    raise ValueError(
                        f"QuantizedDecoder: expected cached {name} of shape "
                        f"{want} with P < max_seq_len {self.limit}, got "
                        f"{None if src is None else src.shape}")
        self.length = 0
        self._grow(max(MIN_POSITIONS, 2 * (P + 1)))
        for mine, pair in zip(self.caches, kv):
            for dst, src in zip(mine, pair):
                float_kernels.load_cache(src, dst, self.B * self.HKV, P,
                                         self.T, self.dk)
        self.length = P

    def step(self, ids):
        """ids (B,): one new token per sequence, at position ``length``
        -> the logits of the next position, a numpy (B, V) array."""
        ids = check_step("QuantizedDecoder", ids, self.B, self.V, self.length,
                         self.limit)
        if self.length >= self.T:
            self._grow(2 * self.T)
        w, B, pos = self.weights, self.B, self.length
        H, HKV, dk, T, D = self.H, self.HKV, self.dk, self.T, self.D
        cl.enqueue_copy(self.queue, self.ids.buffer, ids)   # B ints, to device
        kernels.embed(w.emb, self.ids, self.x, B)
        kernels.gain(self.x, w.layers[0].attn_norm, self.xg, B, D)
        gains = [L.attn_norm for L in w.layers[1:]] + [w.norm]  # what comes next
        for L, (k, v), g_next in zip(w.layers, self.caches, gains):
            kernels.qkv(self.x, self.xg, L.attn_eps, L.wq, L.wk, L.wv,
                        self.table, self.q, k, v, B, H, HKV, dk, T, pos)
            if dk % 16 == 0:
                kernels.attention(self.q, k, v, self.scores, self.o, B, H, HKV,
                                  dk, T, pos + 1, self.scale, self.window)
            else:
                float_kernels.attention(self.q, k, v, self.o, B, H, HKV, dk,
                                        T, pos + 1, self.scale, self.window)
            kernels.residual(self.o, L.wo, self.x, L.ffn_norm, self.xg, B)
            kernels.swiglu(self.x, self.xg, L.ffn_eps, L.w_gate, L.w_up,
                           self.hidden, B)
            kernels.residual(self.hidden, L.w_down, self.x, g_next, self.xg, B)
        kernels.norm(self.x, w.norm, self.xn, B, D, w.norm_eps)
        kernels.matvec(self.xn, w.head, self.logits, B, accumulate=False)
        self.length = pos + 1
        return self.logits.to_host()                        # (B, V)
