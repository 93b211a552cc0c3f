"""``FusedDecoder``: KV-cache generation, one token per step in 5 launches
per layer plus 1 (``kernels/decode.cl``; used by ``DecoderLM.generate``).

Decoding one token is a matrix-vector product per weight matrix: little
work, many small steps. Through the ordinary layers a token of chapter
09's model ran 38 kernels (0.3 ms of device time) and cost the Python
thread about 1 ms (autograd nodes, new Tensors, checks, and ~11 us inside
pyopencl per launch): generation was launch-bound. This decoder owns
every buffer it needs, allocated once (a fixed-size cache of max_seq_len
positions per layer, the residual rows, q, the logits), and launches five
fused kernels per layer plus one for the head, with no autograd at all.
It is inference only and reads the model's weights when it is built (wq,
wk and wv are joined into one (D, (H + 2 HKV) d_k) matrix then): build a
new one after the weights change.

The prompt still runs through ``DecoderLM.forward`` with a ``KVCache``;
``start`` copies that cache in, then each ``step`` feeds one token per
sequence and returns the logits of the next position.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn.kv_cache import KVCache
>>> from netcl_lite.nn.model import DecoderConfig, DecoderLM
>>> queue = manager.default("cpu").queue
>>> model = DecoderLM(queue, DecoderConfig(vocab_size=50, dim=16, n_layers=1,
...                   n_heads=2, n_kv_heads=1, max_seq_len=8, seed=0))
>>> cache = KVCache(1)
>>> _ = model(np.array([[1, 2, 3]], np.int32), cache)    # the prompt, (B, P)
>>> decoder = FusedDecoder(model, batch=1)
>>> decoder.start(cache)
>>> logits = decoder.step([7])                # token 7 at position 3: (B, V)
>>> full = model(np.array([[1, 2, 3, 7]], np.int32)).value.to_host()[:, -1]
>>> logits.shape, bool(np.abs(logits - full).max() < 1e-5), decoder.length
((1, 50), True, 4)
"""

import numpy as np
import pyopencl as cl

import netcl_lite.functional as F
from netcl_lite.autograd import is_recording
from netcl_lite.core.tensor import INT, Tensor
from netcl_lite.functional import decode as kernels   # kernels/decode.cl
from netcl_lite.functional.flash_attention import score_scale
from netcl_lite.functional.rope import rope_table
from netcl_lite.nn.block import DecoderBlock
from netcl_lite.nn.feed_forward import SwiGLU
from netcl_lite.nn.norm import RMSNorm
from netcl_lite.nn.transformer import RotaryAttention

ENABLED = True  # False: generate() keeps the layer-by-layer KVCache path


def unsupported(model):
    """Why decode.cl cannot run ``model``, or None when it can: every block
    must be the plain pre-norm block with causal RoPE attention and SwiGLU,
    all blocks of one shape (a replaced layer keeps the general path)."""
    first, ffn = model.blocks[0].attn, model.blocks[0].ffn
    same = ("n_heads", "n_kv_heads", "head_dim", "base", "rope_scale", "scale")
    for i, block in enumerate(model.blocks):
        kinds = ((block, DecoderBlock), (block.attn, RotaryAttention),
                 (block.ffn, SwiGLU), (block.attn_norm, RMSNorm),
                 (block.ffn_norm, RMSNorm))
        for module, kind in kinds:
            if type(module) is not kind:
                return f"block {i} holds a {type(module).__name__}, not a " \
                       f"{kind.__name__}"
        if not block.attn.causal:
            return f"block {i}'s attention is not causal"
        if any(getattr(block.attn, n) != getattr(first, n) for n in same) or \
                block.ffn.hidden_dim != ffn.hidden_dim:
            return f"block {i} is not shaped like block 0"
    if type(model.norm) is not RMSNorm:
        return f"the final norm is a {type(model.norm).__name__}"
    return None


def fused_decoding(model):
    """Whether ``DecoderLM.generate`` decodes ``model`` with a FusedDecoder:
    ENABLED, outside a Tape, and ``unsupported(model)`` finds nothing."""
    return ENABLED and not is_recording() and unsupported(model) is None


class FusedDecoder:
    """The decoding steps of one ``DecoderLM`` for ``batch`` sequences."""

    def __init__(self, model, batch):
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) \
                or batch <= 0:
            raise ValueError(f"FusedDecoder: batch must be a positive int, got "
                             f"{batch!r}")
        reason = unsupported(model)
        if reason:
            raise ValueError(f"FusedDecoder: {reason}")
        c = model.config
        attn = model.blocks[0].attn
        self.queue = q = model.queue
        self.B, self.D, self.V, self.T = int(batch), c.dim, c.vocab_size, \
            c.max_seq_len
        self.H, self.HKV, self.dk = attn.n_heads, attn.n_kv_heads, attn.head_dim
        self.F = model.blocks[0].ffn.hidden_dim
        self.scale = score_scale(self.dk, attn.scale)
        self.table = rope_table(q, self.T, self.dk // 2, attn.base, 0,
                                attn.rope_scale)          # (T, d_k / 2, 2)
        B, D = self.B, self.D
        self.emb = model.tok_emb.weight.value              # (V, D)
        self.layers = []
        for block in model.blocks:
            a, f = block.attn, block.ffn
            wqkv = F.concat(F.concat(a.wq.value, a.wk.value, axis=1), a.wv.value,
                            axis=1).value                  # (D, (H + 2 HKV) d_k)
            cache = (B, self.HKV, self.T, self.dk)
            self.layers.append(dict(
                attn_norm=block.attn_norm.weight.value, wqkv=wqkv,
                attn_eps=block.attn_norm.eps, ffn_eps=block.ffn_norm.eps,
                wo=a.wo.value, ffn_norm=block.ffn_norm.weight.value,
                w_gate=f.w_gate.value, w_up=f.w_up.value, w_down=f.w_down.value,
                k=Tensor.empty(q, cache), v=Tensor.empty(q, cache)))
        self.norm, self.head = model.norm.weight.value, model.head.weight.value
        self.eps = model.norm.eps
        self.x = Tensor.empty(q, (B, D))           # the residual stream
        self.h = Tensor.empty(q, (B, D))           # ... after the attention
        self.q = Tensor.empty(q, (B, self.H * self.dk))
        self.o = Tensor.empty(q, (B, self.H * self.dk))
        self.hidden = Tensor.empty(q, (B, self.F))
        self.logits = Tensor.empty(q, (B, self.V))
        self.ids = Tensor.empty(q, (B,), INT)      # this step's tokens
        self.rows = Tensor.from_host(q, np.arange(B, dtype=np.int32))
        self.length = 0                            # positions cached

    def start(self, cache):
        """Take over the keys and values a prompt's forward left in a
        ``KVCache`` (each (B, HKV, P, d_k))."""
        if len(cache.layers) != len(self.layers):
            raise ValueError(f"FusedDecoder: the cache has {len(cache.layers)} "
                             f"layers, the model {len(self.layers)}")
        P = cache.length
        want = (self.B, self.HKV, P, self.dk)
        for mine, theirs in zip(self.layers, cache.layers):
            for name in ("k", "v"):
                src = getattr(theirs, name)
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
        ids = np.ascontiguousarray(ids, dtype=np.int32).reshape(-1)
        if ids.shape != (self.B,) or ids.min() < 0 or ids.max() >= self.V:
            raise ValueError(f"FusedDecoder.step: expected {self.B} ids in "
                             f"[0, {self.V}), got {ids.tolist()}")
        if self.length >= self.T:
            raise ValueError(f"FusedDecoder.step: position {self.length} is past "
                             f"max_seq_len {self.T}")
        if is_recording():
            raise ValueError("FusedDecoder is for inference: close the Tape first")
        queue, B, D, pos = self.queue, self.B, self.D, self.length
        H, HKV, dk, T = self.H, self.HKV, self.dk, self.T
        cl.enqueue_copy(queue, self.ids.buffer, ids)     # B ints, host -> device
        x, rows = self.emb, self.ids       # layer 0 reads its rows from the table
        for L in self.layers:
            kernels.qkv(x, rows, L["attn_norm"], L["wqkv"], self.table, self.q,
                        L["k"], L["v"], B, D, H, HKV, dk, T, pos, L["attn_eps"])
            kernels.attention(self.q, L["k"], L["v"], self.o, B, H, HKV, dk, T,
                              pos + 1, self.scale)
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
