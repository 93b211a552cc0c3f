"""RMS normalisation over the last axis (``kernels/rms_norm.cl``).

``rms_norm(x, weight, eps=1e-6)``: x is (..., D), weight is (D,);
y = x / sqrt(mean(x^2) + eps) * weight, row by row.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, [[3.0, 4.0]])    # mean(x^2) = 12.5
>>> w = Tensor.from_host(queue, [1.0, 2.0])
>>> np.round(F.rms_norm(x, w, eps=0.0).value.to_host(), 4)   # x / 3.5355 * w
array([[0.8485, 2.2627]], dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, ceil_div, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_number, min_ndim
from netcl_lite.core.work import FLOAT, counts

# The backward splits the rows into at most BLOCKS blocks, one per work-item:
# enough work-groups for every core, and few partial sums of grad_weight to add.
BLOCKS = 256


def rms_norm(x, weight, eps=1e-6):
    """x (..., D) scaled to unit root-mean-square per row, times weight (D,)."""
    x, weight = nodes(x, weight, op="rms_norm")
    min_ndim(x, 1, "rms_norm", "x (..., D)")
    D = x.shape[-1]
    if weight.shape != (D,):
        raise ValueError(
            f"rms_norm: weight must be (D,) = ({D},) for x {x.shape}, "
            f"got {weight.shape}"
        )
    eps = check_number(eps, "rms_norm", "eps", 0)
    device = x.device
    R = x.value.size // D if D else 0               # rows: (..., D) -> (R, D)
    out = Tensor.empty(device, x.shape)
    rstd = Tensor.empty(device, (R,))               # 1 / rms per row
    launch(device, "rms_norm", "rms_norm_forward", (R,), LOCAL_1D,
           x.value, weight.value, out, rstd, R, D, float(eps))

    def backward(g):
        gx = Tensor.empty(device, x.shape)
        gw = Tensor.empty(device, (D,))
        rows = ceil_div(R, BLOCKS) if R else 1       # rows per work-item
        blocks = ceil_div(R, rows)
        partial = Tensor.empty(device, (blocks, D))  # grad_weight per block
        launch(device, "rms_norm", "rms_norm_backward", (blocks,), LOCAL_1D,
               g, x.value, weight.value, rstd, gx, partial, R, D, rows)
        launch(device, "rms_norm", "rms_norm_backward_weight", (D,), LOCAL_1D,
               partial, gw, blocks, D)
        return gx, gw

    return record(out, (x, weight), backward, "rms_norm")


@counts("rms_norm_forward")
def _forward_work(a):
    # x (R, D): sum of squares (2 D), then x * rstd * w (2 D); rstd (R,)
    R, D = a["R"], a["D"]
    return 4 * R * D, FLOAT * (2 * R * D + D + R)


@counts("rms_norm_backward")
def _backward_work(a):
    # per value: the dot (3), grad_x (4), the weight's partial sum (3);
    # reads g, x; writes grad_x and one (D,) partial per block of rows
    R, D = a["R"], a["D"]
    return 10 * R * D, FLOAT * (3 * R * D + D + R + ceil_div(R, a["rows"]) * D)


@counts("rms_norm_backward_weight")
def _weight_work(a):
    return a["blocks"] * a["D"], FLOAT * (a["blocks"] + 1) * a["D"]
