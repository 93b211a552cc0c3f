"""``FusedDecoder``: KV-cache generation, one token per step in 5 launches
per layer plus 1 (``kernels/decode.cl``; used by ``DecoderLM.generate``).

Decoding one token through the ordinary layers runs dozens of tiny kernels
and is launch-bound; the fused decoder runs five per layer plus one for the
head, with no autograd, on buffers it allocates once. The decoder itself,
its buffers and its launches, is inference code and lives in
``netcl_lite/inference/decoder.py`` (why it is fast is told there). This
module is its door from the modules: ``unsupported`` says whether a
``DecoderLM`` is the plain model those kernels compute, and
``FusedDecoder(model, batch)`` checks it, hands its weights down and takes
the prompt's keys and values from a ``KVCache``. It reads the weights when
it is built: build a new one after they change.

Its cache holds ``positions`` tokens per layer (default: the model's
max_seq_len). ``DecoderLM.generate`` asks for the positions its call can
reach, so a model that could read 8192 tokens does not allocate a cache
for 8192 to write a sentence. A tied head (``TiedHead``) is copied once,
transposed, as decode.cl reads a (D, V) head. A model with quantised
weights is declined (``unsupported`` says so): these kernels read float32.

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

import netcl_lite.functional as F
from netcl_lite.autograd import is_recording
from netcl_lite.inference import decoder as inference
from netcl_lite.nn.block import DecoderBlock
from netcl_lite.nn.feed_forward import SwiGLU
from netcl_lite.nn.norm import RMSNorm
from netcl_lite.nn.tied_head import TiedHead
from netcl_lite.nn.transformer import RotaryAttention
from netcl_lite.nn.weights import quantised_layers

ENABLED = True  # False: generate() keeps the layer-by-layer KVCache path


def unsupported(model):
    """Why decode.cl cannot run ``model``, or None when it can: every block
    must be the plain pre-norm block with causal RoPE attention and SwiGLU,
    all blocks of one shape (a replaced layer keeps the general path)."""
    first, ffn = model.blocks[0].attn, model.blocks[0].ffn
    same = ("n_heads", "n_kv_heads", "head_dim", "base", "rope_scale", "scale",
            "window")
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
    quantised = quantised_layers(model)
    if quantised:
        return f"{quantised[0]} is quantised; the fused kernels read float32"
    return None


def fused_decoding(model):
    """Whether ``DecoderLM.generate`` decodes ``model`` with a FusedDecoder:
    ENABLED, outside a Tape, and ``unsupported(model)`` finds nothing."""
    return ENABLED and not is_recording() and unsupported(model) is None


def decoder_weights(model, positions=None):
    """The weights of a ``DecoderLM`` that ``unsupported`` passes, as the
    inference layer reads them (Tensors, not copies, but for a tied head:
    E^T), with a cache of ``positions`` (None: max_seq_len)."""
    attn = model.blocks[0].attn
    if type(model.head) is TiedHead:   # E (V, D) -> the (D, V) decode.cl reads
        head = F.transpose(model.tok_emb.weight.value, 0, 1).value
    else:
        head = model.head.weight.value
    layers = [inference.LayerWeights(
        attn_norm=b.attn_norm.weight.value, attn_eps=b.attn_norm.eps,
        wq=b.attn.wq.value, wk=b.attn.wk.value, wv=b.attn.wv.value,
        wo=b.attn.wo.value, ffn_norm=b.ffn_norm.weight.value,
        ffn_eps=b.ffn_norm.eps, w_gate=b.ffn.w_gate.value,
        w_up=b.ffn.w_up.value, w_down=b.ffn.w_down.value)
        for b in model.blocks]
    return inference.DecoderWeights(
        emb=model.tok_emb.weight.value, layers=layers,
        norm=model.norm.weight.value, norm_eps=model.norm.eps,
        head=head, n_heads=attn.n_heads, n_kv_heads=attn.n_kv_heads,
        max_seq_len=model.config.max_seq_len if positions is None else positions,
        rope_base=attn.base, rope_scale=attn.rope_scale, scale=attn.scale,
        window=attn.window)


class FusedDecoder(inference.FusedDecoder):
    """The decoding steps of one ``DecoderLM`` for ``batch`` sequences of
    up to ``positions`` tokens (``inference/decoder.py``: ``step`` and the
    buffers)."""

    def __init__(self, model, batch, positions=None):
        inference.check_batch(batch)
        T = model.config.max_seq_len
        if positions is not None and (
                isinstance(positions, bool) or
                not isinstance(positions, (int, np.integer)) or
                not 1 <= positions <= T):
            raise ValueError(f"FusedDecoder: positions must be None or 1.."
                             f"{T} (max_seq_len), got {positions!r}")
        reason = unsupported(model)
        if reason:
            raise ValueError(f"FusedDecoder: {reason}")
        super().__init__(decoder_weights(model, positions and int(positions)),
                         batch)

    def start(self, cache):
        """Take over the keys and values a prompt's forward left in a
        ``KVCache`` (each (B, HKV, P, d_k))."""
        super().start([(layer.k, layer.v) for layer in cache.layers])
