"""``DecoderLM``: a small LLaMA-style language model (chapter 09).

    ids (B, S) -> token embedding (B, S, D)
               -> n_layers x DecoderBlock (RMSNorm, RoPE attention with GQA,
                  residual, RMSNorm, SwiGLU, residual)
               -> final RMSNorm -> output head (B, S, V): next-token logits

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> queue = manager.default("cpu").queue
>>> cfg = DecoderConfig(vocab_size=50, dim=16, n_layers=1, n_heads=2,
...                     n_kv_heads=1, max_seq_len=8, seed=0)
>>> model = DecoderLM(queue, cfg)
>>> model(np.zeros((2, 5), np.int32)).shape                 # (B, S, V)
(2, 5, 50)
>>> len(model.generate([1, 2, 3], max_new_tokens=4, top_k=10, seed=0))
4

``generate`` samples on the host from the last row of logits: divide by the
temperature, keep the ``top_k`` largest and then the smallest set whose
probability reaches ``top_p``, softmax, draw with a seeded ``numpy``
generator. With ``use_cache=True`` the prompt fills a ``KVCache`` and then
a ``FusedDecoder`` (nn/decode.py) feeds one token per step in a few fused
kernels; with ``use_cache=False`` it recomputes the whole context every
step (same tokens, much slower).

Real models use the same class. ``DecoderLM.from_gguf(path)`` reads a
llama-architecture GGUF file (``nn/gguf_loader.py``),
``DecoderLM.from_hf(folder)`` a Hugging Face ``LlamaForCausalLM`` folder
(``nn/hf_loader.py``); ``nn/weights.py`` checks and places their weights.
What such models need is in the config and serves the course's models
too: ``tie_head`` (the head reuses the embedding table,
``nn/tied_head.py``), ``head_dim`` (a head width of its own), ``norm_eps``,
and a long ``max_seq_len`` (SmolLM2's is 8192): nothing is allocated for
all of it up front; the cache grows with the text.
"""

import dataclasses
import math

import numpy as np

import netcl_lite.functional as F
from netcl_lite.autograd import Node
from netcl_lite.core.device import manager
from netcl_lite.core.program import ceil_div
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import last_position
from netcl_lite.nn import hooks as named   # named activations
from netcl_lite.nn.block import DecoderBlock
from netcl_lite.nn.decode import FusedDecoder, fused_decoding
from netcl_lite.nn.embedding import Embedding
from netcl_lite.nn.gguf_loader import read_gguf
from netcl_lite.nn.hf_loader import read_hf
from netcl_lite.nn.kv_cache import KVCache
from netcl_lite.nn.linear import Linear
from netcl_lite.nn.module import Module, deferred_init
from netcl_lite.nn.onnx_export import export_onnx
from netcl_lite.nn.norm import RMSNorm
from netcl_lite.nn.tied_head import TiedHead
from netcl_lite.nn.weights import check_tensors, fill_weights


def swiglu_hidden(dim, multiple_of=32):
    """8/3 dim rounded up to a multiple: 128 -> 352 (LLaMA's choice)."""
    hidden = int(8 * dim / 3)
    return multiple_of * ceil_div(hidden, multiple_of)


_SHOWN_WHEN_SET = ("head_dim", "tie_head", "attn_only")  # __repr__, to_dict


@dataclasses.dataclass
class DecoderConfig:
    """Every number that fixes the model's shapes, plus its init seed."""

    vocab_size: int
    dim: int = 128
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    max_seq_len: int = 64
    hidden_dim: int = 0          # 0: swiglu_hidden(dim)
    rope_base: float = 10000.0
    rope_scale: float = 1.0      # positions x this: 1/4 interpolates, 0 = NoPE
    attn_scale: float = 0.0      # 0: 1/sqrt(head_dim) on the scores
    norm_eps: float = 1e-6
    seed: int = 0
    window: int = 0              # > 0: sliding-window attention; 0: none
    head_dim: int = 0            # 0: dim // n_heads; else a width of its own
    tie_head: bool = False       # True: the head reuses the embedding table
    attn_only: bool = False      # True: no MLP in the blocks (chapter 10)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type in (bool, "bool"):
                if not isinstance(value, (bool, np.bool_)):
                    raise ValueError(f"DecoderConfig: {f.name} must be True "
                                     f"or False, got {value!r}")
                setattr(self, f.name, bool(value))
                continue
            want = float if f.type in (float, "float") else int
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    want is int and not float(value).is_integer()):
                raise ValueError(
                    f"DecoderConfig: {f.name} must be {want.__name__}, got {value!r}"
                )
            setattr(self, f.name, want(value))
        for name in ("vocab_size", "dim", "n_layers", "n_heads", "n_kv_heads",
                     "max_seq_len"):
            if getattr(self, name) <= 0:
                raise ValueError(
                    f"DecoderConfig: {name} must be positive, got {getattr(self, name)}"
                )
        if self.rope_scale < 0 or self.attn_scale < 0:
            raise ValueError(
                f"DecoderConfig: rope_scale and attn_scale must be >= 0, got "
                f"{self.rope_scale} and {self.attn_scale}"
            )
        if self.window < 0:
            raise ValueError(f"DecoderConfig: window must be >= 0 (0: none), "
                             f"got {self.window}")
        for name in ("hidden_dim", "head_dim"):
            if getattr(self, name) < 0:
                raise ValueError(f"DecoderConfig: {name} must be >= 0, got "
                                 f"{getattr(self, name)}")
        if self.hidden_dim == 0:
            self.hidden_dim = swiglu_hidden(self.dim)

    def __repr__(self):
        """Every field, but the ones added later (head_dim, tie_head,
        attn_only) only when set: a course model's config prints as it
        always did."""
        shown = [f"{k}={v!r}" for k, v in self.to_dict().items()]
        return f"{type(self).__name__}({', '.join(shown)})"

    def to_dict(self):
        """The fields as a dict; head_dim, tie_head and attn_only only when
        set, so that what is written for a course model (checkpoints, the
        ONNX file's metadata) stays as it was before they came."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in _SHOWN_WHEN_SET or
                getattr(self, f.name) != f.default}

    @classmethod
    def from_dict(cls, data):
        """Build from a dict; unknown or missing keys -> ValueError."""
        if not isinstance(data, dict):
            raise ValueError(
                f"DecoderConfig: expected a dict, got {type(data).__name__}"
            )
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"DecoderConfig: unknown keys {unknown}")
        if "vocab_size" not in data:
            raise ValueError("DecoderConfig: missing key 'vocab_size'")
        return cls(**data)


def sample_next(logits, temperature=1.0, top_k=None, rng=None, top_p=None):
    """One id drawn from logits (V,): temperature 0 means argmax.

    top_k keeps the k largest logits; top_p (nucleus sampling) then keeps
    the most likely ids until their probability adds up to top_p, so a
    confident model draws from few ids and an unsure one from many.

    >>> sample_next(np.array([1.0, 3.0, 2.0]), temperature=0.0)
    1
    >>> rng = np.random.default_rng(0)
    >>> sample_next(np.array([1.0, 3.0, 2.0]), top_k=1, rng=rng)  # only id 1 left
    1
    >>> p = np.array([0.5, 0.3, 0.2])       # top_p 0.6 keeps ids 0 and 1
    >>> sorted({sample_next(np.log(p), top_p=0.6, rng=rng) for _ in range(50)})
    [0, 1]
    """
    z = np.asarray(logits, np.float64).ravel()
    if temperature == 0:
        return int(np.argmax(z))
    z = z / temperature
    if top_k is not None and top_k < z.size:
        kth = np.partition(z, -top_k)[-top_k]     # the k-th largest logit
        z = np.where(z >= kth, z, -np.inf)        # ties with it stay in
    p = np.exp(z - z.max())
    if top_p is not None and top_p < 1:
        order = np.argsort(-p, kind="stable")     # most likely first
        mass = np.cumsum(p[order]) / p.sum()      # probability so far
        kept = np.zeros(p.size, bool)
        kept[order[:int(np.searchsorted(mass, top_p)) + 1]] = True  # reach top_p
        p = np.where(kept, p, 0.0)
    rng = np.random.default_rng() if rng is None else rng
    return int(rng.choice(z.size, p=p / p.sum()))


def _through_stop(row, stop):
    """The ids of row up to and including its first stop id."""
    for i, token in enumerate(row):
        if token in stop:
            return row[:i + 1]
    return row


class DecoderLM(Module):
    def __init__(self, queue, config):
        if not isinstance(config, DecoderConfig):
            raise ValueError(
                f"DecoderLM needs a DecoderConfig, got {type(config).__name__}"
            )
        c = self.config = config
        self.queue = queue
        # every sub-module draws from its own seed, derived in a fixed order
        seeds = np.random.default_rng(c.seed).integers(0, 2**31 - 2,
                                                       size=c.n_layers + 2)
        self.tok_emb = Embedding(queue, c.vocab_size, c.dim, seed=int(seeds[0]))
        self.blocks = [
            DecoderBlock(queue, c.dim, c.n_heads, c.n_kv_heads, c.max_seq_len,
                         c.hidden_dim, base=c.rope_base, eps=c.norm_eps,
                         seed=int(seeds[1 + i]), rope_scale=c.rope_scale,
                         attn_scale=c.attn_scale or None,
                         window=c.window or None, head_dim=c.head_dim or None,
                         mlp=not c.attn_only)
            for i in range(c.n_layers)
        ]
        self.norm = RMSNorm(queue, c.dim, c.norm_eps)
        if c.tie_head:      # logits = x E^T, E the embedding table
            self.head = TiedHead(self.tok_emb)
        else:
            self.head = Linear(queue, c.dim, c.vocab_size, seed=int(seeds[-1]))
        # ids that end generate() by default: a file's end-of-turn and
        # end-of-text ids; none for the course's own models
        self.stop_ids = ()

    @classmethod
    def from_gguf(cls, path, queue=None):
        """A llama-architecture GGUF file as a model (``nn/gguf_loader.py``),
        on ``queue`` (None: the default device's). ``path`` may also be a
        reader open on the file (``formats/gguf_reader.py: open_gguf``),
        which ``BPETokenizer.from_gguf`` then reads too. The weights are
        read once; every check runs before any kernel."""
        return cls._from_file(read_gguf(path), queue)

    @classmethod
    def from_hf(cls, directory, queue=None):
        """A Hugging Face ``LlamaForCausalLM`` folder (config.json and
        *.safetensors) as a model (``nn/hf_loader.py``); q and k are turned
        to the interleaved RoPE layout on load."""
        return cls._from_file(read_hf(directory), queue)

    @classmethod
    def _from_file(cls, found, queue):
        """Build the model a loader found (nn/weights.py): config and
        tensors checked first, then parameters allocated, not initialised,
        and filled with the file's weights."""
        try:
            config = DecoderConfig.from_dict(found.config)
        except ValueError as err:
            raise ValueError(f"{found.source}: {err}") from None
        check_tensors(found, config)
        bad = [i for i in found.stop_ids if i >= config.vocab_size]
        if bad:
            raise ValueError(f"{found.source}: end-of-text id {bad[0]} is "
                             f"outside the vocabulary of {config.vocab_size}")
        queue = manager.default().queue if queue is None else queue
        with deferred_init():
            model = cls(queue, config)
        fill_weights(model, found.tensors)
        model.stop_ids = tuple(found.stop_ids)
        return model

    def export_onnx(self, path):
        """The forward pass as an ONNX graph at path (nn/onnx_export.py)."""
        return export_onnx(self, path)

    def num_parameters(self):
        return sum(math.prod(p.shape) for p in self.parameters())

    def _ids(self, ids):
        """numpy / list / Tensor / node of int ids -> an int32 (B, S) Tensor."""
        if isinstance(ids, Node):
            ids = ids.value
        if not isinstance(ids, Tensor):
            ids = Tensor.from_host(self.queue, np.asarray(ids))
        if ids.dtype != np.int32 or len(ids.shape) != 2 or 0 in ids.shape:
            raise ValueError(
                f"DecoderLM expects int ids of shape (B, S), got {ids.shape} "
                f"{ids.dtype}"
            )
        return ids

    def head_masks(self, head_mask):
        """{layer: H floats or a (H,) node} -> one mask (or None) per block,
        checked before any kernel: an unknown layer, a wrong length or a
        non-finite value is a ValueError naming it.

        >>> from netcl_lite.core.device import manager
        >>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
        ...     vocab_size=50, dim=16, n_layers=1, n_heads=2, n_kv_heads=1))
        >>> model.loss([[1, 2, 3]], [[2, 3, 4]], head_mask={0: [1.0, 0.0]}).shape
        ()
        >>> model.head_masks({1: [1.0, 0.0]})
        Traceback (most recent call last):
        ...
        ValueError: head_mask: unknown layer 1; the model's layers are 0..0
        """
        n = len(self.blocks)
        if head_mask is None:
            return [None] * n
        if not isinstance(head_mask, dict):
            raise ValueError(f"head_mask: expected a dict {{layer: H floats}}, "
                             f"got {type(head_mask).__name__}")
        for layer in head_mask:
            if isinstance(layer, bool) or not isinstance(
                    layer, (int, np.integer)) or not 0 <= layer < n:
                raise ValueError(f"head_mask: unknown layer {layer!r}; the "
                                 f"model's layers are 0..{n - 1}")
        return [self.blocks[i].attn.head_weights(
                    head_mask.get(i), f"head_mask[{i}]") for i in range(n)]

    def forward(self, ids, cache=None, last_only=False, head_mask=None):
        """Logits (B, S, V) for ids (B, S); with a KVCache, the ids continue
        the cached positions. last_only: logits of the last position only,
        (B, 1, V), as sampling needs (no gradient flows through that cut).
        head_mask: {layer: H floats}, each head's output times its float
        (``MultiHeadAttention.forward``; 0 removes the head)."""
        ids = self._ids(ids)
        masks = self.head_masks(head_mask)
        B, S = ids.shape
        offset = 0 if cache is None else cache.length
        if offset + S > self.config.max_seq_len:
            raise ValueError(
                f"positions {offset}..{offset + S - 1} exceed max_seq_len "
                f"{self.config.max_seq_len} (S = {S}, cached = {offset})"
            )
        if cache is not None and len(cache.layers) != len(self.blocks):
            raise ValueError(
                f"cache has {len(cache.layers)} layers, the model "
                f"{len(self.blocks)}"
            )
        x = self.tok_emb(ids)                                  # (B, S, D)
        for i, block in enumerate(self.blocks):
            x = block(x, offset, None if cache is None else cache.layers[i],
                      head_mask=masks[i])
        x = named.final_norm(self, x)           # self.norm(x), (B, S, D)
        if last_only:
            x = last_position(x.value)                         # (B, 1, D)
        return self.head(x)                                    # (B, S, V)

    # --- named activations (nn/hooks.py lists the names) --------------------
    def hook_names(self):
        """Every activation name of this model, in forward order."""
        return named.activation_names(self)

    def run_with_cache(self, ids, names=None, hooks=None):
        """(logits (B, S, V), {name: array}) for the activations named (all
        when None), from one forward pass; ``hooks`` as in
        ``run_with_hooks`` (the cache then holds what the model used)."""
        return named.run_with_cache(self, ids, names, hooks)

    def run_with_hooks(self, ids, hooks):
        """The logits (B, S, V) when each named activation is replaced by
        ``hooks[name](array)`` (an array of the same shape)."""
        return named.run_with_hooks(self, ids, hooks)

    def activation_grads(self, ids, metric, names):
        """{name: d metric / d activation} from one forward and backward;
        ``metric`` maps the logits node to a scalar node."""
        return named.activation_grads(self, ids, metric, names)

    def loss(self, ids, targets, head_mask=None):
        """Mean next-token cross-entropy; targets (B, S) are ids shifted by one.
        head_mask as in ``forward``."""
        return F.cross_entropy(self(ids, head_mask=head_mask), self._ids(targets))

    def generate(self, prompt, max_new_tokens, temperature=1.0, top_k=None,
                 top_p=None, stop_ids=None, on_token=None, seed=0,
                 use_cache=True):
        """Continue a prompt: a list of ids -> the list of new ids, or a batch
        of equal-length prompts (B, P) -> B lists (rows sampled in order).

        temperature 0 is greedy; top_k and top_p narrow the draw
        (``sample_next``). A row ends at the first id of ``stop_ids`` it
        draws, and that id is the last of its list: a list shorter than
        max_new_tokens ends with the id that stopped it (as transformers
        returns it). stop_ids None: the model's ``stop_ids``, a file's
        end-of-turn and end-of-text ids (none for the course's models);
        ``()``: never stop early. ``on_token(id)``, for one prompt, is
        called with each new id as soon as it is drawn (streaming), the
        stop id included.

        Without the cache the context is cropped to the last max_seq_len
        tokens; with it, prompt + new tokens must fit in max_seq_len. The
        cache grows with the text (``KVCache``; ``FusedDecoder`` allocates
        the positions this call can reach, not max_seq_len).
        """
        prompt = np.asarray(prompt)
        batched = prompt.ndim == 2
        stop = self._check_generate(prompt, max_new_tokens, temperature, top_k,
                                    use_cache, top_p, stop_ids, on_token)
        T = self.config.max_seq_len
        rng = np.random.default_rng(seed)
        ids = np.atleast_2d(prompt).astype(np.int32)           # (B, P)
        P = ids.shape[1]
        stopped = np.zeros(len(ids), bool)         # rows that drew a stop id
        cache = KVCache(len(self.blocks)) if use_cache else None
        fused = None    # after the prompt: FusedDecoder steps (nn/decode.py)
        feed = ids                           # what the next forward must read
        for step in range(max_new_tokens):
            if fused is not None:
                rows = fused.step(feed[:, 0])                   # (B, V)
            else:
                context = feed if use_cache else ids[:, -T:]
                logits = self.forward(context, cache, last_only=True)
                rows = logits.value.to_host()[:, -1]            # (B, V)
                if use_cache and step + 1 < max_new_tokens and \
                        fused_decoding(self):
                    fused = FusedDecoder(self, len(ids),
                                         positions=P + max_new_tokens - 1)
                    fused.start(cache)
            feed = np.array([[sample_next(row, temperature, top_k, rng, top_p)]
                             for row in rows], np.int32)        # (B, 1)
            ids = np.concatenate([ids, feed], axis=1)           # (B, t + 1)
            if on_token is not None:
                on_token(int(feed[0, 0]))
            stopped |= np.isin(feed[:, 0], stop)
            if stopped.all():
                break
        new = [_through_stop(row, stop) for row in ids[:, P:].tolist()]
        return new if batched else new[0]

    def _check_generate(self, prompt, max_new_tokens, temperature, top_k,
                        use_cache, top_p=None, stop_ids=None, on_token=None):
        """Every argument checked before any kernel; returns the stop ids
        (an int array)."""
        V, T = self.config.vocab_size, self.config.max_seq_len
        if prompt.ndim not in (1, 2) or prompt.shape[-1] == 0 or \
                prompt.size == 0:
            raise ValueError(
                f"generate: the prompt needs at least one token, as a list of "
                f"ids or a (B, P) batch; got shape {prompt.shape}"
            )
        if prompt.dtype.kind not in "iu":
            raise ValueError(f"generate: prompt ids must be integers, got "
                             f"{prompt.dtype}")
        bad = prompt[(prompt < 0) | (prompt >= V)]
        if bad.size:
            raise ValueError(f"generate: prompt id {bad[0]} is outside [0, {V})")
        if isinstance(max_new_tokens, bool) or \
                not isinstance(max_new_tokens, (int, np.integer)) or \
                max_new_tokens < 0:
            raise ValueError(
                f"generate: max_new_tokens must be an int >= 0, got {max_new_tokens!r}"
            )
        if not (isinstance(temperature, (int, float)) and
                math.isfinite(temperature) and temperature >= 0):
            raise ValueError(
                f"generate: temperature must be a finite number >= 0, got "
                f"{temperature!r}"
            )
        if top_k is not None and (not isinstance(top_k, (int, np.integer))
                                  or not 1 <= top_k <= V):
            raise ValueError(f"generate: top_k must be None or 1..{V}, got {top_k!r}")
        if top_p is not None and (isinstance(top_p, bool) or not isinstance(
                top_p, (int, float)) or not 0 < top_p <= 1):
            raise ValueError(f"generate: top_p must be None or in (0, 1], got "
                             f"{top_p!r}")
        stop = self.stop_ids if stop_ids is None else stop_ids
        try:
            stop = np.asarray(list(stop))
        except TypeError:
            stop = np.asarray(None)
        if stop.ndim != 1 or (stop.size and (stop.dtype.kind not in "iu" or
                                             stop.min() < 0 or stop.max() >= V)):
            raise ValueError(f"generate: stop_ids must be None or ids in "
                             f"[0, {V}), got {stop_ids!r}")
        if on_token is not None and (not callable(on_token) or
                                     prompt.ndim != 1):
            raise ValueError(f"generate: on_token must be a function of one "
                             f"id, for a single prompt (a list of ids); got "
                             f"{on_token!r} with a prompt of shape "
                             f"{prompt.shape}")
        P = prompt.shape[-1]
        if use_cache and P + max_new_tokens - 1 > T:
            raise ValueError(
                f"generate: prompt ({P}) + max_new_tokens ({max_new_tokens}) "
                f"- 1 > max_seq_len {T}: the cache would overflow; use "
                f"use_cache=False for longer output"
            )
        return stop.astype(np.int64)

    def attention_maps(self, ids):
        """The attention weights of every layer: a list of (B, H, S, S) arrays.

        Each layer's ``RotaryAttention.attention_map`` recomputes them from
        the projections its forward uses (the fused kernel never stores
        them), on the same normalised input the block feeds it.
        """
        x = self.tok_emb(self._ids(ids))                       # (B, S, D)
        maps = []
        for block in self.blocks:
            A = block.attn.attention_map(block.attn_norm(x))   # (B, H, S, S)
            maps.append(A.value.to_host())
            x = block(x)
        return maps
