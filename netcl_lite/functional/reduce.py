"""sum over every value, deterministic (``kernels/reduce.cl``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> q = manager.default("cpu").queue
>>> F.sum(Tensor.from_host(q, np.arange(10.0))).value.to_host()
array(45., dtype=float32)
"""

from netcl_lite.autograd import record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.checks import nodes

PARTS = 64  # pass 1 work-items: enough to fill the cores, few to add up


def sum_tensor(x):
    """Sum of every value of a Tensor -> a 0-d Tensor."""
    q, n = x.queue, x.size
    parts = min(PARTS, max(n, 1))
    chunk = -(-n // parts) if n else 1
    partial = Tensor.empty(q, (parts,))
    out = Tensor.empty(q, ())
    launch(q, "reduce", "sum_partial", (parts,), LOCAL_1D,
           x, partial, n, chunk, parts)
    launch(q, "reduce", "sum_final", (1,), LOCAL_1D, partial, out, parts)
    return out


def sum(x):  # noqa: A001 - the name the course uses: F.sum
    """The sum of all values, as a 0-d node. Backward broadcasts grad_out."""
    (x,) = nodes(x, op="sum")
    q = x.queue

    def backward(g):
        gx = Tensor.empty(q, x.shape)
        launch(q, "reduce", "sum_backward", (x.value.size,), LOCAL_1D,
               g, gx, x.value.size)
        return (gx,)

    return record(sum_tensor(x.value), (x,), backward)
