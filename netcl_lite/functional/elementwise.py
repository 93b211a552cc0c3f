"""add, mul and scale: the elementwise ops (``kernels/elementwise.cl``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> q = manager.default("cpu").queue
>>> a = Tensor.from_host(q, np.array([1.0, 2.0]))
>>> F.scale(F.add(a, a), 0.5).value.to_host()
array([1., 2.], dtype=float32)
"""

from netcl_lite.autograd import record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.checks import nodes, same_shape


def add_tensors(a, b):
    """a + b on bare Tensors (no graph); the tape uses it to sum gradients."""
    out = Tensor.empty(a.queue, a.shape)
    launch(a.queue, "elementwise", "add_forward", (a.size,), LOCAL_1D,
           a, b, out, a.size)
    return out


def scale_tensor(x, c):
    out = Tensor.empty(x.queue, x.shape)
    launch(x.queue, "elementwise", "scale_forward", (x.size,), LOCAL_1D,
           x, out, float(c), x.size)
    return out


def add(a, b):
    """a + b, same shapes. Backward: both inputs receive grad_out."""
    a, b = nodes(a, b, op="add")
    same_shape(a, b, "add")
    out = add_tensors(a.value, b.value)

    def backward(g):
        return g, g

    return record(out, (a, b), backward)


def mul(a, b):
    """a * b elementwise, same shapes."""
    a, b = nodes(a, b, op="mul")
    same_shape(a, b, "mul")
    q, n = a.queue, a.value.size
    out = Tensor.empty(q, a.shape)
    launch(q, "elementwise", "mul_forward", (n,), LOCAL_1D,
           a.value, b.value, out, n)

    def backward(g):
        ga, gb = Tensor.empty(q, a.shape), Tensor.empty(q, b.shape)
        launch(q, "elementwise", "mul_backward", (n,), LOCAL_1D,
               g, a.value, b.value, ga, gb, n)
        return ga, gb

    return record(out, (a, b), backward)


def scale(x, c):
    """c * x for a Python number c. Backward: grad_x = c * grad_out."""
    (x,) = nodes(x, op="scale")
    c = float(c)

    def backward(g):
        return (scale_tensor(g, c),)

    return record(scale_tensor(x.value, c), (x,), backward)
