"""Token embedding from a quantised table (chapter 14).

``quantized_embedding(w, ids)``: w is a ``QuantizedWeight`` (V, D), ids
int32 of any shape (...) -> (..., D) float32: row ids[t] of the table,
dequantised (``kernels/quant_embedding.cl``). The result is a constant:
a quantised table gets no gradient, and ids never do.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.quantized import QuantizedWeight
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> q = np.arange(32) % 16                          # codes 0..15, twice
>>> table = np.array([q, q / 2, -q], np.float32)     # V=3, D=32, exact in
>>> qw = QuantizedWeight.from_float(queue, table, "Q4_1")   # Q4_1
>>> ids = Tensor.from_host(queue, np.array([2, 0, 1], np.int32))
>>> F.quantized_embedding(qw, ids).value.to_host()[:, :4]
array([[ 0. , -1. , -2. , -3. ],
       [ 0. ,  1. ,  2. ,  3. ],
       [ 0. ,  0.5,  1. ,  1.5]], dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_2D, launch
from netcl_lite.core.quantized import QuantizedWeight
from netcl_lite.core.tensor import INT, Tensor
from netcl_lite.core.validate import check_ids, same_queue


def quantized_embedding(w, ids):
    """Rows of the quantised table w (V, D) picked by int32 ids (...) ->
    (..., D), dequantised; no gradient."""
    if not isinstance(w, QuantizedWeight):
        raise ValueError(f"quantized_embedding: w must be a QuantizedWeight, "
                         f"got {type(w).__name__}")
    (ids,) = nodes(ids, dtype=None, op="quantized_embedding")
    if ids.dtype != INT:
        raise ValueError(f"quantized_embedding: ids must be int32, got "
                         f"{ids.dtype}")
    same_queue(ids.value, w.queue, "quantized_embedding", "ids", "the weight")
    V, D = w.rows, w.cols
    check_ids(ids.value, V, "quantized_embedding")
    N = ids.value.size                                  # tokens, flattened
    out = Tensor.empty(w.queue, (*ids.shape, D))        # (..., D)
    launch(w.queue, "quant_embedding", "quant_embedding", (D, N), LOCAL_2D,
           w.scales, w.quants, ids.value, out, w.code, N, D)
    return record(out, (ids,), lambda g: (None,), "quantized_embedding")
