"""Layers whose weights stay quantised on the device (chapter 14).

``QuantizedLinear(weight)``: y = x W^T with W a ``QuantizedWeight``
(d_out, d_in), as a GGUF file stores a linear layer (one row per output).
``QuantizedEmbedding(weight)``: rows of a quantised (V, D) table. A tied
output head is a ``QuantizedLinear`` over the embedding's own
``QuantizedWeight``: one set of blocks on the device serves both.

Neither has parameters: ``named_parameters()`` finds none, so optimizers,
checkpoints and ``export_onnx`` see nothing to train or save in them. The
class attribute ``quantized = True`` is what other code tests for, to
refuse such a layer by name where float32 weights are needed.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.quantized import QuantizedWeight
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> table = QuantizedWeight.from_float(
...     queue, np.random.default_rng(0).standard_normal((10, 64)), "Q4_1")
>>> embed, head = QuantizedEmbedding(table), QuantizedLinear(table)  # tied
>>> x = embed(Tensor.from_host(queue, np.array([[1, 2, 1]])))  # (B, S) -> (B, S, D)
>>> x.shape, head(x).shape, head.parameters(), head.quantized
((1, 3, 64), (1, 3, 10), [], True)
"""

import netcl_lite.functional as F
from netcl_lite.core.quantized import QuantizedWeight
from netcl_lite.nn.module import Module


def _weight(weight, layer):
    if not isinstance(weight, QuantizedWeight):
        raise ValueError(f"{layer} takes a QuantizedWeight, got "
                         f"{type(weight).__name__}")
    return weight


class QuantizedLinear(Module):
    """y = x W^T; d_in = weight.cols, d_out = weight.rows; no parameters."""

    quantized = True

    def __init__(self, weight):
        self.weight = _weight(weight, "QuantizedLinear")
        self.d_in, self.d_out = weight.cols, weight.rows

    def forward(self, x):
        if x.shape[-1] != self.d_in:
            raise ValueError(f"QuantizedLinear expects last dim {self.d_in}, "
                             f"got input shape {x.shape}")
        return F.quantized_matmul(x, self.weight)  # (..., d_in) -> (..., d_out)


class QuantizedEmbedding(Module):
    """Row t of the quantised table (V, D), dequantised; no gradient."""

    quantized = True

    def __init__(self, weight):
        self.weight = _weight(weight, "QuantizedEmbedding")
        self.num_embeddings, self.dim = weight.rows, weight.cols

    def forward(self, ids):
        return F.quantized_embedding(self.weight, ids)  # (...) -> (..., D)
