"""``clip_grad_norm``: rescale every gradient together when their global
L2 norm exceeds ``max_norm`` (``kernels/clip.cl``; chapter 09).

One unlucky batch can produce a gradient many times the usual size; with
clipping its step keeps its direction but not its length.

>>> import numpy as np
>>> import netcl_lite.autograd as ag
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> w = ag.tensor(Tensor.from_host(queue, [0.0, 0.0]))
>>> w.grad = Tensor.from_host(queue, [3.0, 4.0])      # norm 5
>>> round(clip_grad_norm([w], max_norm=1.0), 4)       # returns the norm before
5.0
>>> np.round(w.grad.to_host(), 4)                     # now of norm 1
array([0.6, 0.8], dtype=float32)
"""

import math

import numpy as np

from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import PARTS, chunks, scale_tensor
from netcl_lite.core.validate import check_number
from netcl_lite.core.work import FLOAT, counts


def grad_norm(params):
    """sqrt(sum of every gradient value squared), over params with a grad."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    device = grads[0].device
    partial = Tensor.zeros(device, (len(grads) * PARTS,))  # (n_grads * PARTS,)
    for i, g in enumerate(grads):
        n = g.size
        parts, chunk = chunks(n)                   # at most PARTS partial sums
        launch(device, "clip", "sum_squares_partial", (parts,), LOCAL_1D,
               g, partial, n, chunk, parts, i * PARTS)
    return math.sqrt(float(np.sum(partial.to_host(), dtype=np.float64)))


@counts("sum_squares_partial")
def _sum_squares_work(a):
    return 2 * a["n"], FLOAT * (a["n"] + a["parts"])


def clip_grad_norm(params, max_norm):
    """Scale gradients by max_norm / norm when norm > max_norm; returns norm."""
    check_number(max_norm, "clip_grad_norm", "max_norm", 0, low_open=True)
    params = list(params)
    norm = grad_norm(params)
    if not math.isfinite(norm):
        raise ValueError(f"clip_grad_norm: the gradient norm is {norm}")
    if norm > max_norm:
        c = max_norm / (norm + 1e-6)
        for p in params:
            if p.grad is not None:
                p.grad = scale_tensor(p.grad, c)
    return norm
