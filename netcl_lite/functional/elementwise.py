"""add, mul and scale: the elementwise ops (``kernels/elementwise.cl``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> a = Tensor.from_host(queue, np.array([1.0, 2.0]))
>>> F.scale(F.add(a, a), 0.5).value.to_host()
array([1., 2.], dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import add_tensors, scale_tensor, work_items
from netcl_lite.core.validate import same_shape
from netcl_lite.core.work import FLOAT, counts


def add(a, b):
    """a + b, same shapes. Backward: both inputs receive grad_out."""
    a, b = nodes(a, b, op="add")
    same_shape(a, b, "add")
    out = add_tensors(a.value, b.value)

    def backward(g):
        return g, g

    return record(out, (a, b), backward, "add")


def mul(a, b):
    """a * b elementwise, same shapes."""
    a, b = nodes(a, b, op="mul")
    same_shape(a, b, "mul")
    device, n = a.device, a.value.size
    out = Tensor.empty(device, a.shape)
    items = work_items(device, n)  # about 256 values each on a CPU
    launch(device, "elementwise", "mul_forward", (items,), LOCAL_1D,
           a.value, b.value, out, n)

    def backward(g):
        ga, gb = Tensor.empty(device, a.shape), Tensor.empty(device, b.shape)
        launch(device, "elementwise", "mul_backward", (items,), LOCAL_1D,
               g, a.value, b.value, ga, gb, n)
        return ga, gb

    return record(out, (a, b), backward, "mul")


@counts("mul_forward")
def _forward_work(a):
    return a["n"], 3 * FLOAT * a["n"]


@counts("mul_backward")
def _backward_work(a):
    # g b and g a; reads g, a, b; writes two grads
    return 2 * a["n"], 5 * FLOAT * a["n"]


def scale(x, c):
    """c * x for a Python number c. Backward: grad_x = c * grad_out."""
    (x,) = nodes(x, op="scale")
    c = float(c)

    def backward(g):
        return (scale_tensor(g, c),)

    return record(scale_tensor(x.value, c), (x,), backward, "scale")
