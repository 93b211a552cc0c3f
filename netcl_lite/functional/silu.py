"""SiLU (swish), x * sigmoid(x), elementwise (``kernels/silu.cl``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, [-1.0, 0.0, 1.0])
>>> np.round(F.silu(x).value.to_host(), 4)
array([-0.2689,  0.    ,  0.7311], dtype=float32)
>>> F.silu(Tensor.from_host(queue, [-1000.0, 1000.0])).value.to_host()  # no overflow
array([  -0., 1000.], dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import work_items
from netcl_lite.core.work import FLOAT, counts


def silu(x):
    """x * sigmoid(x). Backward: grad_x = g * s * (1 + x * (1 - s))."""
    (x,) = nodes(x, op="silu")
    device, n = x.device, x.value.size
    out = Tensor.empty(device, x.shape)
    items = work_items(device, n)  # about 256 values each on a CPU
    launch(device, "silu", "silu_forward", (items,), LOCAL_1D, x.value, out, n)

    def backward(g):
        gx = Tensor.empty(device, x.shape)
        launch(device, "silu", "silu_backward", (items,), LOCAL_1D,
               g, x.value, gx, n)
        return (gx,)

    return record(out, (x,), backward, "silu")


@counts("silu_forward")
def _forward_work(a):
    # x sigmoid(x): exp, add, divide, multiply
    return 4 * a["n"], 2 * FLOAT * a["n"]


@counts("silu_backward")
def _backward_work(a):
    # sigmoid (3), g s (1 + x (1 - s)) (5); reads g, x; writes the grad
    return 8 * a["n"], 3 * FLOAT * a["n"]
