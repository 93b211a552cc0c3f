"""softmax over the last axis, optionally causal (``kernels/softmax.cl``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, [[0.0, np.log(3.0)]])
>>> np.round(F.softmax(x).value.to_host(), 4)          # [1, 3] / 4
array([[0.25, 0.75]], dtype=float32)
>>> F.softmax(Tensor.from_host(queue, np.zeros((2, 2))), causal=True).value.to_host()
array([[1. , 0. ],
       [0.5, 0.5]], dtype=float32)

With causal=True, x is (..., Sq, Sk) and query row i sees key j only if
j <= i + (Sk - Sq): the mask M of the chapter (section 3, step 3) aligned
to the bottom-right, so a single new query row (Sq = 1) sees every key.
A row that sees nothing (Sq > Sk) comes out as zeros, never NaN.
"""

import math

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import min_ndim
from netcl_lite.core.work import FLOAT, counts, visible


def softmax(x, causal=False):
    """exp(x - max) / sum(exp(x - max)) per row of the last axis.

    Backward: grad_x = y * (grad_y - sum(grad_y * y)) per row.
    """
    (x,) = nodes(x, op="softmax")
    causal = bool(causal)
    min_ndim(x, 2 if causal else 1, "softmax",
             "x (..., Sq, Sk) with causal=True" if causal else "x")
    Sk = x.shape[-1]
    Sq = x.shape[-2] if causal else 1
    R = math.prod(x.shape[:-1])              # rows: (..., Sq) flattened
    device = x.device
    y = Tensor.empty(device, x.shape)
    launch(device, "softmax", "softmax_forward", (R,), LOCAL_1D,
           x.value, y, R, Sq, Sk, causal)

    def backward(g):
        gx = Tensor.empty(device, x.shape)
        launch(device, "softmax", "softmax_backward", (R,), LOCAL_1D,
               y, g, gx, R, Sq, Sk, causal)
        return (gx,)

    return record(y, (x,), backward, "softmax")


@counts("softmax_forward")
def _forward_work(a):
    # per visible value: max, subtract, exp, add, divide; reads the visible
    # values, writes every one (0 where masked)
    pairs = a["R"] // max(a["Sq"], 1) * visible(a["Sq"], a["Sk"], a["causal"])
    return 5 * pairs, FLOAT * (pairs + a["R"] * a["Sk"])


@counts("softmax_backward")
def _backward_work(a):
    # per visible value: the dot g . y (2), then y (g - dot) (2); reads y and
    # g where visible, writes every grad
    pairs = a["R"] // max(a["Sq"], 1) * visible(a["Sq"], a["Sk"], a["causal"])
    return 4 * pairs, FLOAT * (2 * pairs + a["R"] * a["Sk"])
