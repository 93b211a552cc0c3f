"""``FusedDecoder``: KV-cache generation, one token per step in 5 launches
per layer plus 1 (``kernels/decode.cl``, launched by ``decode.py``).

Decoding one token is a matrix-vector product per weight matrix: little
work, many small steps. Through the ordinary layers a token of chapter
09's model ran 38 kernels (0.3 ms of device time) and cost the Python
thread about 1 ms (autograd nodes, new Tensors, checks, and ~11 us inside
pyopencl per launch): generation was launch-bound. This decoder owns
every buffer it needs, allocated once (a fixed-size cache of max_seq_len
positions per layer, the residual rows, q, the logits), and launches five
fused kernels per layer plus one for the head, with no autograd at all.
It reads the weights when it is built (wq, wk and wv are joined into one
(D, (H + 2 HKV) d_k) matrix then): build a new one after they change.

It knows a decoder by its weights alone (``DecoderWeights``), not by its
modules: ``nn.FusedDecoder(model, batch)`` checks that a ``DecoderLM`` is
the plain model these kernels compute, hands its weights down and feeds
``start`` from a ``KVCache`` (``nn/decode.py``, with the worked example).
The attention of a step is decode.cl's ``decode_attention``, outside
``F.scaled_dot_product_attention`` (whose docstring's table lists it):
these steps record nothing, and the cache is a fixed (B, HKV, T, d_k)
buffer, not a node.
"""

import dataclasses

import numpy as np
import pyopencl as cl

import netcl_lite.functional as F
from netcl_lite.autograd import is_recording
from netcl_lite.core.tensor import INT, Tensor
from netcl_lite.functional.flash_attention import check_window, score_scale
from netcl_lite.functional.rope import rope_table
from netcl_lite.inference import decode as kernels   # kernels/decode.cl


@dataclasses.dataclass
class LayerWeights:
    """One pre-norm block: h = x + attention(RMSNorm(x)) W_O, then
    h + SwiGLU(RMSNorm(h)). D model width, d_k head width, F hidden width."""
    attn_norm: Tensor     # (D,) the RMSNorm before the attention
    attn_eps: float
    wq: Tensor            # (D, H d_k)
    wk: Tensor            # (D, HKV d_k)
    wv: Tensor            # (D, HKV d_k)
    wo: Tensor            # (H d_k, D)
    ffn_norm: Tensor      # (D,) the RMSNorm before the SwiGLU
    ffn_eps: float
    w_gate: Tensor        # (D, F)
    w_up: Tensor          # (D, F)
    w_down: Tensor        # (F, D)


@dataclasses.dataclass
class DecoderWeights:
    """A whole decoder: the embedding, the blocks, the final norm and head,
    and the numbers that the weights' shapes do not give."""
    emb: Tensor           # (V, D) the token embeddings
    layers: list          # one LayerWeights per block, all of one shape
    norm: Tensor          # (D,) the final RMSNorm
    norm_eps: float
    head: Tensor          # (D, V)
    n_heads: int          # H query heads; GQA: query head h reads kv head
    n_kv_heads: int       # h // (H // HKV)
    max_seq_len: int      # T: the positions each layer's cache holds
    rope_base: float      # RoPE on (x[2i], x[2i + 1]), functional/rope.py
    rope_scale: float     # 1: plain RoPE; 0: no position encoding
    scale: float = None   # the factor on q k^T; None: 1/sqrt(d_k)
    window: int = None    # sliding window: a step sees its last W keys


def check_batch(batch):
    """``batch`` must be a positive int: a ValueError otherwise."""
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) \
            or batch <= 0:
        raise ValueError(f"FusedDecoder: batch must be a positive int, got "
                         f"{batch!r}")


def check_step(who, ids, B, V, position, limit):
    """ids as a (B,) int32 array in [0, V), one step at ``position`` below
    ``limit``, outside a Tape: a ValueError naming what is wrong otherwise.

    >>> check_step("FusedDecoder", [3, 4], 2, 10, 0, 8)
    array([3, 4], dtype=int32)
    """
    ids = np.ascontiguousarray(ids, dtype=np.int32).reshape(-1)
    if ids.shape != (B,) or ids.min() < 0 or ids.max() >= V:
        raise ValueError(f"{who}.step: expected {B} ids in [0, {V}), got "
                         f"{ids.tolist()}")
    if position >= limit:
        raise ValueError(f"{who}.step: position {position} is past "
                         f"max_seq_len {limit}")
    if is_recording():
        raise ValueError(f"{who} is for inference: close the Tape first")
    return ids


def check_weights(w):
    """The shapes decode.cl assumes, as a ValueError naming them."""
    V, D = w.emb.shape
    H, HKV = w.n_heads, w.n_kv_heads
    if not w.layers or H <= 0 or HKV <= 0 or H % HKV:
        raise ValueError(f"FusedDecoder: {len(w.layers)} layers, {H} query "
                         f"heads and {HKV} kv heads (need layers and H % HKV "
                         f"== 0)")
    dk, hidden = w.layers[0].wq.shape[1] // H, w.layers[0].w_gate.shape[1]
    if dk % 2 or dk * H != w.layers[0].wq.shape[1]:
        raise ValueError(f"FusedDecoder: wq {w.layers[0].wq.shape} does not "
                         f"split into {H} heads of an even width (RoPE pairs)")
    want = dict(attn_norm=(D,), wq=(D, H * dk), wk=(D, HKV * dk),
                wv=(D, HKV * dk), wo=(H * dk, D), ffn_norm=(D,),
                w_gate=(D, hidden), w_up=(D, hidden), w_down=(hidden, D))
    for i, layer in enumerate(w.layers):
        for name, shape in want.items():
            got = getattr(layer, name).shape
            if got != shape:
                raise ValueError(f"FusedDecoder: layer {i}'s {name} is {got}, "
                                 f"expected {shape}")
    if w.norm.shape != (D,) or w.head.shape != (D, V):
        raise ValueError(f"FusedDecoder: norm {w.norm.shape} and head "
                         f"{w.head.shape}, expected ({D},) and ({D}, {V})")


class FusedDecoder:
    """The decoding steps of one decoder (``DecoderWeights``) for ``batch``
    sequences."""

    def __init__(self, weights, batch):
        check_batch(batch)
        check_weights(weights)
        w = weights
        self.queue = q = w.emb.queue
        self.B, self.T = int(batch), w.max_seq_len
        self.V, self.D = w.emb.shape
        self.H, self.HKV = w.n_heads, w.n_kv_heads
        self.dk = w.layers[0].wq.shape[1] // self.H
        self.F = w.layers[0].w_gate.shape[1]
        self.scale = score_scale(self.dk, w.scale)
        # 0 (none) or W: decode_attention starts at key length - W
        self.window = check_window(w.window, True, self.T + 1, "FusedDecoder")
        self.table = rope_table(q, self.T, self.dk // 2, w.rope_base, 0,
                                w.rope_scale)            # (T, d_k / 2, 2)
        B, D = self.B, self.D
        self.emb = w.emb                                   # (V, D)
        self.layers = []
        for layer in w.layers:
            wqkv = F.concat(F.concat(layer.wq, layer.wk, axis=1), layer.wv,
                            axis=1).value                  # (D, (H + 2 HKV) d_k)
            cache = (B, self.HKV, self.T, self.dk)
            self.layers.append(dict(
                attn_norm=layer.attn_norm, wqkv=wqkv, attn_eps=layer.attn_eps,
                ffn_eps=layer.ffn_eps, wo=layer.wo, ffn_norm=layer.ffn_norm,
                w_gate=layer.w_gate, w_up=layer.w_up, w_down=layer.w_down,
                k=Tensor.empty(q, cache), v=Tensor.empty(q, cache)))
        self.norm, self.head, self.eps = w.norm, w.head, w.norm_eps
        self.x = Tensor.empty(q, (B, D))           # the residual stream
        self.h = Tensor.empty(q, (B, D))           # ... after the attention
        self.q = Tensor.empty(q, (B, self.H * self.dk))
        self.o = Tensor.empty(q, (B, self.H * self.dk))
        self.hidden = Tensor.empty(q, (B, self.F))
        self.logits = Tensor.empty(q, (B, self.V))
        self.ids = Tensor.empty(q, (B,), INT)      # this step's tokens
        self.rows = Tensor.from_host(q, np.arange(B, dtype=np.int32))
        self.length = 0                            # positions cached

    def start(self, kv):
        """Take over the keys and values a prompt's forward computed: one
        (k, v) pair per layer, each (B, HKV, P, d_k)."""
        if len(kv) != len(self.layers):
            raise ValueError(f"FusedDecoder: the cache has {len(kv)} "
                             f"layers, the model {len(self.layers)}")
        P = 0 if not kv or kv[0][0] is None else kv[0][0].shape[2]
        want = (self.B, self.HKV, P, self.dk)
        for mine, pair in zip(self.layers, kv):
            for name, src in zip(("k", "v"), pair):
                if src is None or src.shape != want or P >= self.T:
                    raise ValueError(
                        f"FusedDecoder: expected cached {name} of shape {want} "
                        f"with P < max_seq_len {self.T}, got "
                        f"{None if src is None else src.shape}")
                kernels.load_cache(src, mine[name], self.B * self.HKV, P,
                                   self.T, self.dk)
        self.length = P

    def step(self, ids):
        """ids (B,): one new token per sequence, at position ``length``
        -> the logits of the next position, a numpy (B, V) array."""
        ids = check_step("FusedDecoder", ids, self.B, self.V, self.length,
                         self.T)
        queue, B, D, pos = self.queue, self.B, self.D, self.length
        H, HKV, dk, T = self.H, self.HKV, self.dk, self.T
        cl.enqueue_copy(queue, self.ids.buffer, ids)     # B ints, host -> device
        x, rows = self.emb, self.ids       # layer 0 reads its rows from the table
        for L in self.layers:
            kernels.qkv(x, rows, L["attn_norm"], L["wqkv"], self.table, self.q,
                        L["k"], L["v"], B, D, H, HKV, dk, T, pos, L["attn_eps"])
            kernels.attention(self.q, L["k"], L["v"], self.o, B, H, HKV, dk, T,
                              pos + 1, self.scale, self.window)
            kernels.residual(x, rows, self.o, L["wo"], self.h, B, H * dk, D)
            kernels.swiglu(self.h, L["ffn_norm"], L["w_gate"], L["w_up"],
                           self.hidden, B, D, self.F, L["ffn_eps"])
            kernels.residual(self.h, self.rows, self.hidden, L["w_down"], self.x,
                             B, self.F, D)
            x, rows = self.x, self.rows
        kernels.norm_matvec(self.x, self.norm, self.head, self.logits, B, D,
                            self.V, self.eps)
        self.length = pos + 1
        return self.logits.to_host()                     # (B, V)
