"""SwiGLU's gate, silu(a) * b, in one kernel each way (``kernels/swiglu.cl``).

``swiglu(a, b)`` computes exactly ``mul(silu(a), b)`` (chapter 09's
feed-forward, with a = x W_gate and b = x W_up), but reads a and b once and
never stores silu(a): one kernel forward, one backward, instead of two each.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> a = Tensor.from_host(queue, [-1.0, 0.0, 1.0])
>>> b = Tensor.from_host(queue, [2.0, 5.0, 3.0])
>>> np.round(F.swiglu(a, b).value.to_host(), 4)    # silu(a) = [-0.2689, 0, 0.7311]
array([-0.5379,  0.    ,  2.1932], dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import work_items
from netcl_lite.core.validate import same_shape
from netcl_lite.core.work import FLOAT, counts


def swiglu(a, b):
    """silu(a) * b, same shapes. Backward, with s = sigmoid(a):
    grad_a = g * b * s * (1 + a * (1 - s)), grad_b = g * a * s."""
    a, b = nodes(a, b, op="swiglu")
    same_shape(a, b, "swiglu")
    device, n = a.device, a.value.size
    out = Tensor.empty(device, a.shape)
    items = work_items(device, n)  # about 256 values each on a CPU
    launch(device, "swiglu", "swiglu_forward", (items,), LOCAL_1D,
           a.value, b.value, out, n)

    def backward(g):
        ga, gb = Tensor.empty(device, a.shape), Tensor.empty(device, b.shape)
        launch(device, "swiglu", "swiglu_backward", (items,), LOCAL_1D,
               g, a.value, b.value, ga, gb, n)
        return ga, gb

    return record(out, (a, b), backward, "swiglu")


@counts("swiglu_forward")
def _forward_work(a):
    # silu(a) b = a / (1 + e^-|a|) (or e/(1+e)) * b: exp, add, divide, 2 mul
    return 5 * a["n"], 3 * FLOAT * a["n"]


@counts("swiglu_backward")
def _backward_work(a):
    # sigmoid (3), grad_b (2), grad_a (6); reads g, a, b; writes two grads
    return 11 * a["n"], 5 * FLOAT * a["n"]
