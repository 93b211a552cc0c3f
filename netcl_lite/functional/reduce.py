"""sum over every value, deterministic (``kernels/reduce.cl``).

The two-pass sum itself is ``core/tensor_ops.sum_tensor``, shared with the
loss; this file adds its gradient.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> F.sum(Tensor.from_host(queue, np.arange(10.0))).value.to_host()
array(45., dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import sum_tensor
from netcl_lite.core.work import FLOAT, counts


def sum(x):  # noqa: A001 - the name the course uses: F.sum
    """The sum of all values, as a 0-d node. Backward broadcasts grad_out."""
    (x,) = nodes(x, op="sum")
    device = x.device

    def backward(g):
        gx = Tensor.empty(device, x.shape)
        launch(device, "reduce", "sum_backward", (x.value.size,), LOCAL_1D,
               g, gx, x.value.size)
        return (gx,)

    return record(sum_tensor(x.value), (x,), backward, "sum")


@counts("sum_backward")
def _backward_work(a):
    return 0, FLOAT * (a["n"] + 1)      # g (one value) to every grad
