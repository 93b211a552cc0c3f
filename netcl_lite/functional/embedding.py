"""Token embedding: look up one row of a table per id (``kernels/embedding.cl``).

``embedding(table, ids)``: table is (V, D) float32, ids is int32 of any
shape (...) -> (..., D). The backward adds each token's gradient into its
table row, so an id seen twice collects both; ids get no gradient.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> table = Tensor.from_host(queue, [[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]])  # V=3, D=2
>>> ids = Tensor.from_host(queue, np.array([2, 0, 2], np.int32))
>>> F.embedding(table, ids).value.to_host()
array([[2. , 2.5],
       [0. , 0.5],
       [2. , 2.5]], dtype=float32)
"""

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import INT, Tensor
from netcl_lite.core.validate import check_ids
from netcl_lite.core.work import FLOAT, counts


def embedding(table, ids):
    """Rows of table (V, D) picked by int32 ids (...) -> (..., D)."""
    table, ids = nodes(table, ids, dtype=None, op="embedding")
    if table.dtype != np.float32:
        raise ValueError(f"embedding: table must be float32, got {table.dtype}")
    if len(table.shape) != 2:
        raise ValueError(f"embedding: table must be (V, D), got shape {table.shape}")
    if ids.dtype != INT:
        raise ValueError(f"embedding: ids must be int32, got {ids.dtype}")
    V, D = table.shape
    check_ids(ids.value, V, "embedding")
    device = table.device
    N = ids.value.size                             # tokens, ids flattened
    out = Tensor.empty(device, (*ids.shape, D))    # (..., D)
    launch(device, "embedding", "embedding_forward", (N,), LOCAL_1D,
           table.value, ids.value, out, N, D)

    def backward(g):
        gt = Tensor.zeros(device, (V, D))
        launch(device, "embedding", "embedding_backward", (D,), LOCAL_1D,
               g, ids.value, gt, N, D)
        return gt, None

    return record(out, (table, ids), backward, "embedding")


@counts("embedding_forward")
def _forward_work(a):
    # out (N, D) = table[ids]: N rows read and written, the ids read
    return 0, FLOAT * (2 * a["N"] * a["D"] + a["N"])


@counts("embedding_backward")
def _backward_work(a):
    # grad_table[ids[n]] += grad_out[n]: 1 add per value; read g, read and
    # write the table row
    return a["N"] * a["D"], FLOAT * (3 * a["N"] * a["D"] + a["N"])
