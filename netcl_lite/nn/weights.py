"""From a file's tensors to a ``DecoderLM``'s weights (``from_gguf``, ``from_hf``).

A loader (``nn/gguf_loader.py``, ``nn/hf_loader.py``) reads a file and
returns a ``FoundModel``: the config, and each weight as a ``FileTensor``,
named as the model names its parameters (``blocks.3.attn.wq``). This
module does what the two formats share:

- ``check_tensors``: every tensor the config implies is there, of a
  supported type and the right shape, and nothing else is, before any
  kernel runs or any device memory is taken. Errors name the file's own
  name for the tensor (``blk.3.attn_q.weight``).
- ``make_weight``: the one door from a file's tensor to a layer's weight.
  Every weight passes through it, so what a type becomes on the device
  is decided in one place: a matrix in Q4_0, Q4_1, Q8_0 or F16 stays in
  its file's format, a ``QuantizedWeight`` read by a ``QuantizedLinear``
  or ``QuantizedEmbedding`` (``nn/quantized.py``); F32 and BF16 become
  float32 parameters, which training can change (a float checkpoint can
  be fine-tuned);
- ``fill_weights``: puts each weight where its parameter is: a float one
  into the parameter, a quantised layer in the parameter's place. A tied
  head over a quantised table is a ``QuantizedLinear`` over the same
  blocks.

Files store a matrix one row per output feature, (out, in), the way
PyTorch's ``nn.Linear`` does and ``QuantizedLinear`` reads it; the
course's layers compute x @ W with W (in, out), so a float matrix is
transposed once, on load.

>>> import numpy as np
>>> t = FileTensor("w", "BF16", (2, 2),
...                np.array([[0x3F80, 0x4000], [0xC040, 0x0000]], np.uint16))
>>> t.floats()                    # bfloat16: the top 16 bits of a float32
array([[ 1.,  2.],
       [-3.,  0.]], dtype=float32)
>>> from netcl_lite.core.device import manager
>>> queue = manager.default("cpu").queue
>>> make_weight(queue, t, "matrix").to_host()        # float: (in, out)
array([[ 1., -3.],
       [ 2.,  0.]], dtype=float32)
>>> half = FileTensor("w", "F16", (2, 32), np.ones((2, 32), np.float16))
>>> layer = make_weight(queue, half, "matrix")       # kept in the file's format
>>> type(layer).__name__, layer.weight
('QuantizedLinear', QuantizedWeight(F16, rows=2, cols=32, nbytes=128))
"""

import dataclasses
from typing import Callable

import numpy as np

from netcl_lite.autograd import Node
from netcl_lite.core.quantized import BLOCK, QuantizedWeight
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn.embedding import Embedding
from netcl_lite.nn.linear import Linear
from netcl_lite.nn.quantized import QuantizedEmbedding, QuantizedLinear
from netcl_lite.nn.tied_head import TiedHead

# what a weight may be stored as; anything else is refused by name
SUPPORTED_TYPES = ("Q4_0", "Q4_1", "Q8_0", "F16", "BF16", "F32")
# the types a matrix keeps on the device (QuantizedWeight); the others
# become float32 parameters
QUANTISED_TYPES = ("Q4_0", "Q4_1", "Q8_0", "F16")


@dataclasses.dataclass
class FileTensor:
    """One tensor as a file stores it.

    ``data`` holds its values as stored: float32 or float16 values,
    bfloat16 as uint16, or, for the block types (Q4_0, Q4_1, Q8_0), the
    blocks' bytes, which ``dequantize`` (the file format's own reader) turns
    into float32. It is an array (often a memory map of the file), or a
    function that reads it when called, so that a model's weights pass
    through host memory one tensor at a time."""
    name: str                    # the file's name, for messages
    qtype: str                   # one of SUPPORTED_TYPES, or what the file says
    shape: tuple                 # numpy order: (out, in) or (n,)
    data: object                 # an array, or a function returning it
    dequantize: Callable = None  # bytes -> float32, for the block types

    def stored(self):
        """The values as stored (read now, if ``data`` is a function)."""
        return self.data() if callable(self.data) else self.data

    def floats(self):
        """The values as a float32 array of ``shape``."""
        data = self.stored()
        if self.qtype == "F32":
            values = np.asarray(data, np.float32)
        elif self.qtype == "F16":
            values = np.asarray(data).astype(np.float32)
        elif self.qtype == "BF16":   # the top half of a float32's bits
            bits = np.asarray(data, np.uint16).astype(np.uint32) << 16
            values = bits.view(np.float32)
        else:
            values = self.dequantize(data)
        return values.reshape(self.shape)


@dataclasses.dataclass
class FoundModel:
    """What a loader read: enough to build and fill a ``DecoderLM``."""
    source: str                  # the file or folder, for messages
    config: dict                 # ``DecoderConfig``'s fields
    tensors: dict                # parameter name -> FileTensor
    file_name: Callable          # parameter name -> the file's name for it
    unexpected: list             # the file's tensors with no place in the model
    stop_ids: tuple = ()         # the file's end-of-turn and end-of-text ids


def file_shapes(c):
    """{parameter name: its shape in a file, (out, in)} for DecoderConfig c."""
    D, F, V = c.dim, c.hidden_dim, c.vocab_size
    hd = c.head_dim or c.dim // c.n_heads
    q, kv = c.n_heads * hd, c.n_kv_heads * hd
    shapes = {"tok_emb.weight": (V, D)}
    for i in range(c.n_layers):
        block = {
            "attn_norm.weight": (D,), "attn.wq": (q, D), "attn.wk": (kv, D),
            "attn.wv": (kv, D), "attn.wo": (D, q), "ffn_norm.weight": (D,),
            "ffn.w_gate": (F, D), "ffn.w_up": (F, D), "ffn.w_down": (D, F),
        }
        shapes.update({f"blocks.{i}.{k}": v for k, v in block.items()})
    shapes["norm.weight"] = (D,)
    if not c.tie_head:
        shapes["head.weight"] = (V, D)
    return shapes


def check_tensors(found, config):
    """Every tensor present, supported and of its shape; nothing extra.
    A ValueError names the first problem (the file's name for the tensor)."""
    where = found.source
    if found.unexpected:
        raise ValueError(
            f"{where}: unexpected tensor {found.unexpected[0]!r} "
            f"({len(found.unexpected)} in all): the model is a plain llama "
            f"decoder and has no place for it")
    expected = file_shapes(config)
    missing = [name for name in expected if name not in found.tensors]
    if missing:
        raise ValueError(
            f"{where}: missing tensor {found.file_name(missing[0])!r} "
            f"({len(missing)} missing)")
    for name, shape in expected.items():
        t = found.tensors[name]
        if t.qtype not in SUPPORTED_TYPES:
            raise ValueError(
                f"{where}: tensor {t.name!r} has type {t.qtype}, which is not "
                f"supported; supported: {', '.join(SUPPORTED_TYPES)}")
        if tuple(t.shape) != shape:
            raise ValueError(
                f"{where}: tensor {t.name!r} has shape {tuple(t.shape)}, the "
                f"config needs {shape} (out, in)")


def make_weight(queue, tensor, kind):
    """The weight a layer computes with, from a file's tensor.

    kind: "matrix" (a linear layer's (out, in)), "embedding" (the (V, D)
    table) or "vector" (a norm's gain). A matrix or table in one of
    QUANTISED_TYPES becomes a layer over its bytes on the device
    (``QuantizedLinear``, ``QuantizedEmbedding``); anything else a float32
    Tensor: a matrix as (in, out), for x @ W."""
    if kind != "vector" and tensor.qtype in QUANTISED_TYPES and \
            tensor.shape[-1] % BLOCK == 0:      # F16 rows in whole blocks
        rows, cols = tensor.shape
        weight = QuantizedWeight(queue, tensor.stored(), tensor.qtype, rows,
                                 cols)
        return (QuantizedEmbedding if kind == "embedding" else
                QuantizedLinear)(weight)
    values = tensor.floats()                             # (out, in) or (n,)
    if kind == "matrix":
        values = values.T                                # (in, out)
    return Tensor.from_host(queue, np.ascontiguousarray(values, np.float32))


def _kind(name, shape):
    if len(shape) == 1:
        return "vector"
    return "embedding" if name == "tok_emb.weight" else "matrix"


def _owner(model, name):
    """"blocks.3.attn.wq" -> (model.blocks[3].attn, "wq")."""
    *path, last = name.split(".")
    owner = model
    for part in path:
        owner = owner[int(part)] if part.isdigit() else getattr(owner, part)
    return owner, last


def fill_weights(model, tensors):
    """Make each weight (``make_weight``) and put it where its parameter
    is: a Tensor becomes the parameter's value; a quantised layer takes the
    parameter's place (attn.wq), or the module's (tok_emb, head)."""
    for name, tensor in tensors.items():
        made = make_weight(model.queue, tensor, _kind(name, tensor.shape))
        owner, attr = _owner(model, name)
        if isinstance(made, Tensor):
            getattr(owner, attr).value = made
        elif name in ("tok_emb.weight", "head.weight"):
            setattr(model, name.split(".")[0], made)
        else:
            setattr(owner, attr, made)
    if type(model.head) is TiedHead and type(model.tok_emb) is not Embedding:
        # tied to a quantised table: the head reads the same blocks
        model.head = QuantizedLinear(model.tok_emb.weight)


def quantised_layers(model):
    """The names of the weights ``model`` keeps as layers of their own
    (quantised, read from a file) instead of float parameters: what
    checkpoints and ONNX export cannot write. Empty for a float model.

    >>> from netcl_lite.core.device import manager
    >>> from netcl_lite.nn.model import DecoderConfig, DecoderLM
    >>> model = DecoderLM(manager.default("cpu").queue, DecoderConfig(
    ...     vocab_size=16, dim=8, n_layers=1, n_heads=2, n_kv_heads=1))
    >>> quantised_layers(model)
    []
    """
    found = []
    if type(model.tok_emb) is not Embedding:
        found.append(("tok_emb", model.tok_emb))
    if type(model.head) not in (Linear, TiedHead):
        found.append(("head", model.head))
    for i, block in enumerate(model.blocks):
        for owner, names in ((block.attn, ("wq", "wk", "wv", "wo")),
                             (block.ffn, ("w_gate", "w_up", "w_down"))):
            if owner is None:                  # attn_only: no MLP
                continue
            prefix = f"blocks.{i}.{'attn' if owner is block.attn else 'ffn'}."
            found += [(prefix + n, getattr(owner, n)) for n in names
                      if not isinstance(getattr(owner, n), Node)]
    return [f"{name} ({type(layer).__name__})" for name, layer in found]
