"""Cross-entropy loss of logits against integer targets
(``kernels/cross_entropy.cl``).

``cross_entropy(logits, targets)``: logits is (..., V) float32, targets is
int32 (...) with the same leading shape -> a scalar node (shape ()): the mean
over rows of -log softmax(logits)[target]. The backward is
(softmax - onehot(target)) * grad_out / N.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> logits = Tensor.from_host(queue, [[0.0, 0.0], [1e4, 0.0]])  # huge is fine
>>> targets = Tensor.from_host(queue, np.array([1, 0], np.int32))  # (log 2 + 0) / 2
>>> round(float(F.cross_entropy(logits, targets).value.to_host()), 6)
0.346574
"""

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import INT, Tensor
from netcl_lite.core.tensor_ops import scale_tensor, sum_tensor
from netcl_lite.core.validate import check_ids, min_ndim
from netcl_lite.core.work import FLOAT, counts


def _check(logits, targets):
    if logits.dtype != np.float32:
        raise ValueError(f"cross_entropy: logits must be float32, got {logits.dtype}")
    min_ndim(logits, 1, "cross_entropy", "logits (..., V)")
    if targets.dtype != INT:
        raise ValueError(f"cross_entropy: targets must be int32, got {targets.dtype}")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(
            f"cross_entropy: targets shape {targets.shape} must equal the "
            f"leading shape {logits.shape[:-1]} of logits {logits.shape}"
        )
    N, V = targets.value.size, logits.shape[-1]
    if N == 0 or V == 0:
        raise ValueError(
            f"cross_entropy: need at least one row and one class, "
            f"got N={N} rows and V={V}"
        )
    check_ids(targets.value, V, "cross_entropy", what="target")


def cross_entropy(logits, targets):
    """Mean of -log softmax(logits)[target] over every row -> shape ()."""
    logits, targets = nodes(logits, targets, dtype=None, op="cross_entropy")
    _check(logits, targets)
    device = logits.device
    V = logits.shape[-1]
    N = targets.value.size                         # rows: (..., V) -> (N, V)
    loss_rows = Tensor.empty(device, (N,))
    row_sum = Tensor.empty(device, (N,))           # sum exp(logit - max)
    exps = Tensor.empty(device, (N, V))            # exp(logit - max)
    launch(device, "cross_entropy", "cross_entropy_forward", (N,), LOCAL_1D,
           logits.value, targets.value, loss_rows, row_sum, exps, N, V)
    out = scale_tensor(sum_tensor(loss_rows), 1.0 / N)   # shape ()

    def backward(g):
        gl = Tensor.empty(device, logits.shape)
        launch(device, "cross_entropy", "cross_entropy_backward", (N,), LOCAL_1D,
               g, exps, targets.value, row_sum, gl, N, V, 1.0 / N)
        return gl, None

    return record(out, (logits, targets), backward, "cross_entropy")


@counts("cross_entropy_forward")
def _forward_work(a):
    # logits (N, V): max, subtract, exp, add per value; exps (N, V) written
    return 4 * a["N"] * a["V"], FLOAT * (2 * a["N"] * a["V"] + 4 * a["N"])


@counts("cross_entropy_backward")
def _backward_work(a):
    # grad = (exps / s - onehot) * g / N: 2 per value; reads exps, writes grad
    return (2 * a["N"] * a["V"],
            FLOAT * (2 * a["N"] * a["V"] + 3 * a["N"] + 1))
