"""``read_gguf(path)``: a llama-architecture GGUF file as a ``FoundModel``
(``DecoderLM.from_gguf`` builds the model from it, ``nn/weights.py``).

GGUF, llama.cpp's format, is one file: a header, metadata (key -> value),
a table of tensors (name, shape, type, where its data starts) and the data.
The ``gguf`` package, from the llama.cpp project, parses it
(``netcl_lite/formats/gguf_reader.py``, which the tokenizer's reader
shares); this module reads a model out of what it parsed:

- the config from the metadata: ``llama.embedding_length`` is the width,
  ``llama.block_count`` the layers, ``llama.attention.head_count`` and
  ``head_count_kv`` the heads, ``llama.attention.key_length`` a head width
  of its own, ``llama.feed_forward_length`` the SwiGLU width,
  ``llama.rope.freq_base`` RoPE's base, ``llama.context_length`` the
  longest text, ``llama.attention.layer_norm_rms_epsilon`` the norms' eps;
- the weights, renamed: ``blk.3.attn_q.weight`` is ``blocks.3.attn.wq``
  (``FILE_NAMES``). No ``output.weight``: the head is tied to the token
  embedding;
- a shape lists the fastest-varying size first, so ``attn_k [576, 192]``
  is the numpy (192, 576), one row per output;
- q and k are already in the interleaved RoPE layout of ``F.rope``, pairs
  (x[2i], x[2i+1]): llama.cpp's converter permuted them;
- the ids that end a turn or the text: ``tokenizer.ggml.eos_token_id``,
  ``eot_token_id`` and ``eom_token_id``, and the control tokens whose text
  marks an end (``END_MARKERS``), as llama.cpp's own list does.

Refused, each by a ValueError that names it: another architecture, a
K-quant or other type (``weights.SUPPORTED_TYPES`` lists what is read),
RoPE scaling, experts, a key the model needs and the file lacks, and a
damaged file: an unparsable header, metadata or tensor table, tensor data
past the end of the file, a missing tensor or a wrong shape. All of it
before any kernel runs. (GGUF has no checksum: damaged weight bytes read
as other weights.)

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notes.gguf")
>>> with open(path, "wb") as f:
...     _ = f.write(b"not a model")
>>> read_gguf(path)
Traceback (most recent call last):
...
ValueError: .../notes.gguf: not a readable GGUF file: the header is damaged (...)

The reader needs the ``gguf`` package (the ``models`` extra); importing this
module does not.
"""

import importlib.util
import pathlib
import re

import numpy as np

from netcl_lite.formats.gguf_reader import (is_reader, open_gguf, require_gguf,
                                            source_of)
from netcl_lite.nn.onnx_export import skip_examples
from netcl_lite.nn.weights import FileTensor, FoundModel

ARCHITECTURES = ("llama",)
# our parameter name in a block -> the file's, "blk.{i}.<this>.weight"
FILE_NAMES = {
    "attn_norm.weight": "attn_norm", "attn.wq": "attn_q", "attn.wk": "attn_k",
    "attn.wv": "attn_v", "attn.wo": "attn_output", "ffn_norm.weight": "ffn_norm",
    "ffn.w_gate": "ffn_gate", "ffn.w_up": "ffn_up", "ffn.w_down": "ffn_down",
}
OUTSIDE_BLOCKS = {"tok_emb.weight": "token_embd.weight",
                  "norm.weight": "output_norm.weight",
                  "head.weight": "output.weight"}
# control tokens that end a turn or a text (llama.cpp's list, in part)
END_MARKERS = ("<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|eom_id|>",
               "<|end_of_text|>", "<|end|>", "<end_of_turn>", "</s>")
CONTROL = 3                     # tokenizer.ggml.token_type of a control token


def file_name(name):
    """Our parameter name -> the file's: "blocks.3.attn.wq" ->
    "blk.3.attn_q.weight"."""
    if name in OUTSIDE_BLOCKS:
        return OUTSIDE_BLOCKS[name]
    _, i, rest = name.split(".", 2)
    return f"blk.{i}.{FILE_NAMES[rest]}.weight"


def our_name(name, n_layers):
    """The file's tensor name -> ours, or None when the model has no place
    for it."""
    for ours, theirs in OUTSIDE_BLOCKS.items():
        if name == theirs:
            return ours
    m = re.fullmatch(r"blk\.(\d+)\.(\w+)\.weight", name)
    if m and int(m[1]) < n_layers:
        for ours, theirs in FILE_NAMES.items():
            if m[2] == theirs:
                return f"blocks.{int(m[1])}.{ours}"
    return None


_INTS = ("UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64",
         "INT64")
_FLOATS = ("FLOAT32", "FLOAT64") + _INTS
_REQUIRED = object()


class _Metadata:
    """The file's metadata keys, each read with its type checked."""

    def __init__(self, reader, source):
        self.fields, self.source = reader.fields, source

    def get(self, key, kinds, default=_REQUIRED, what=""):
        field = self.fields.get(key)
        if field is None:
            if default is _REQUIRED:
                raise ValueError(f"{self.source}: metadata key {key!r} "
                                 f"({what}) is missing; the model needs it")
            return default
        kind = field.types[0].name if field.types else "?"
        if kind not in kinds:
            raise ValueError(f"{self.source}: metadata key {key!r} is a "
                             f"{kind}, expected one of {', '.join(kinds)}")
        try:
            return field.contents()
        except (UnicodeDecodeError, IndexError) as err:
            raise ValueError(f"{self.source}: metadata key {key!r} cannot "
                             f"be read ({err})") from None


def _config(meta, tensors):
    """DecoderConfig's fields from the llama.* keys (refusing what the
    model cannot compute)."""
    src = meta.source
    arch = meta.get("general.architecture", ("STRING",),
                    what="the model's architecture")
    if arch not in ARCHITECTURES:
        raise ValueError(f"{src}: architecture {arch!r} is not supported; "
                         f"supported: {', '.join(ARCHITECTURES)}")
    a = arch + "."
    scaling = meta.get(a + "rope.scaling.type", ("STRING",), "none")
    if scaling != "none":
        raise ValueError(f"{src}: RoPE scaling {scaling!r} ({a}rope.scaling."
                         f"type) is not supported; supported: none")
    experts = meta.get(a + "expert_count", _INTS, 0)
    if experts:
        raise ValueError(f"{src}: a mixture of {experts} experts "
                         f"({a}expert_count) is not supported")
    dim = meta.get(a + "embedding_length", _INTS, what="the model's width")
    n_heads = meta.get(a + "attention.head_count", _INTS,
                       what="the query heads")
    key_length = meta.get(a + "attention.key_length", _INTS, 0)
    value_length = meta.get(a + "attention.value_length", _INTS, key_length)
    if value_length != key_length:
        raise ValueError(f"{src}: keys of width {key_length} and values of "
                         f"width {value_length}: the model needs them equal")
    own = key_length and (n_heads <= 0 or key_length * n_heads != dim)
    head_dim = key_length if own else 0       # 0: dim // n_heads
    width = key_length or (dim // n_heads if n_heads > 0 else 0)
    rotated = meta.get(a + "rope.dimension_count", _INTS, width)
    if rotated != width:
        raise ValueError(f"{src}: RoPE on {rotated} of the {width} dims of a "
                         f"head ({a}rope.dimension_count) is not supported; "
                         f"the model turns every pair")
    embd = tensors.get("token_embd.weight")
    vocab = meta.get(a + "vocab_size", _INTS,
                     int(embd.shape[1]) if embd is not None else _REQUIRED,
                     what="the vocabulary size")
    return dict(
        vocab_size=vocab, dim=dim,
        n_layers=meta.get(a + "block_count", _INTS, what="the layers"),
        n_heads=n_heads,
        n_kv_heads=meta.get(a + "attention.head_count_kv", _INTS, n_heads),
        max_seq_len=meta.get(a + "context_length", _INTS,
                             what="the longest text"),
        hidden_dim=meta.get(a + "feed_forward_length", _INTS,
                            what="the SwiGLU width"),
        rope_base=meta.get(a + "rope.freq_base", _FLOATS, 10000.0),
        norm_eps=meta.get(a + "attention.layer_norm_rms_epsilon", _FLOATS,
                          what="RMSNorm's eps"),
        head_dim=head_dim,
        tie_head="output.weight" not in tensors)


def _stop_ids(meta):
    """The ids that end generation: eos/eot/eom, and the control tokens
    whose text is an end marker."""
    ids = set()
    for key in ("eos", "eot", "eom"):
        found = meta.get(f"tokenizer.ggml.{key}_token_id", _INTS, None)
        if found is not None:
            ids.add(found)
    tokens = meta.fields.get("tokenizer.ggml.tokens")
    types = meta.get("tokenizer.ggml.token_type", ("ARRAY",), None)
    if tokens is not None and types is not None:
        for i, kind in enumerate(types):
            if kind == CONTROL and i < len(tokens.data) and \
                    _text(tokens, i) in END_MARKERS:
                ids.add(i)
    return tuple(sorted(ids))


def _text(tokens, i):
    """Token i's text, or None when its bytes are not UTF-8."""
    try:
        return tokens.contents(i)
    except UnicodeDecodeError:
        return None


def _file_tensor(t):
    """One of the reader's tensors as a FileTensor, its shape in numpy order."""
    import gguf                                  # only when reading a file
    qtype = t.tensor_type.name
    shape = tuple(int(n) for n in reversed(t.shape.tolist()))
    data = t.data
    if qtype == "BF16":                          # bytes -> 16-bit words
        data = np.asarray(data).view(np.uint16).reshape(shape)
    dequantize = None
    if qtype not in ("F32", "F16", "BF16"):
        def dequantize(raw, kind=t.tensor_type):
            return gguf.quants.dequantize(raw, kind)
    return FileTensor(t.name, qtype, shape, data, dequantize)


def read_gguf(source):
    """Read ``source`` -> FoundModel; see the module docstring. ``source``
    is a GGUF file's path, or a reader that ``open_gguf`` (or gguf itself)
    opened already: ``netcl_lite.nn.pretrained`` gives the model and the
    tokenizer one reader."""
    if is_reader(source):
        reader, path = source, source_of(source)
    else:
        require_gguf()
        path = pathlib.Path(source)
        if not path.is_file():
            raise ValueError(f"{path}: no such file")
        reader = open_gguf(path)
    by_name = {t.name: t for t in reader.tensors}
    meta = _Metadata(reader, str(path))
    config = _config(meta, by_name)
    tensors, unexpected = {}, []
    for name, t in by_name.items():
        ours = our_name(name, config["n_layers"])
        if ours is None:
            unexpected.append(name)
        else:
            tensors[ours] = _file_tensor(t)
    return FoundModel(source=str(path), config=config, tensors=tensors,
                      file_name=file_name, unexpected=unexpected,
                      stop_ids=_stop_ids(meta))


# tests/test_docstrings.py runs every docstring; without gguf (an optional
# package) the example is skipped rather than failed
if importlib.util.find_spec("gguf") is None:
    __doc__ = skip_examples(__doc__)
