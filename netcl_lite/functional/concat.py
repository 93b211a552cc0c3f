"""concat: two tensors joined along one axis (``kernels/concat.cl``).

``concat(a, b, axis)``: a and b have the same shape except along ``axis``;
the output holds a's values, then b's, along that axis. The KV-cache
(``nn/kv_cache.py``) appends new keys this way, along the positions.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> a = Tensor.from_host(queue, [[1.0, 2.0], [3.0, 4.0]])       # (2, 2)
>>> b = Tensor.from_host(queue, [[5.0], [6.0]])                 # (2, 1)
>>> F.concat(a, b, axis=1).value.to_host()                      # (2, 3)
array([[1., 2., 5.],
       [3., 4., 6.]], dtype=float32)

Backward: the gradient is split back along the same axis.
"""

import math

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_2D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_int
from netcl_lite.core.work import FLOAT, counts


def _check(a, b, axis):
    ndim = len(a.shape)
    check_int(axis, "concat", "axis", -ndim, ndim - 1,
              what=f"an int in [{-ndim}, {ndim - 1}] for shape {a.shape}")
    axis %= ndim
    if len(b.shape) != ndim or any(
            sa != sb for i, (sa, sb) in enumerate(zip(a.shape, b.shape))
            if i != axis):
        raise ValueError(
            f"concat: a {a.shape} and b {b.shape} must match except along "
            f"axis {axis}"
        )
    return axis


def concat(a, b, axis=0):
    """a and b joined along ``axis`` (negative counts from the end)."""
    a, b = nodes(a, b, op="concat")
    axis = _check(a, b, axis)
    device = a.device
    R = math.prod(a.shape[:axis])            # rows: every index before axis
    A = math.prod(a.shape[axis:])            # a's part of a row
    Bn = math.prod(b.shape[axis:])           # b's part of a row
    shape = list(a.shape)
    shape[axis] += b.shape[axis]
    out = Tensor.empty(device, shape)        # (..., Sa + Sb, ...)
    launch(device, "concat", "concat_forward", (A + Bn, R), LOCAL_2D,
           a.value, b.value, out, R, A, Bn)

    def backward(g):
        ga, gb = Tensor.empty(device, a.shape), Tensor.empty(device, b.shape)
        launch(device, "concat", "concat_backward", (A + Bn, R), LOCAL_2D,
               g, ga, gb, R, A, Bn)
        return ga, gb

    return record(out, (a, b), backward, "concat")


@counts("concat_forward", "concat_backward")
def _concat_work(a):
    # a copy: R rows of A + Bn values read and written
    return 0, 2 * FLOAT * a["R"] * (a["A"] + a["Bn"])
