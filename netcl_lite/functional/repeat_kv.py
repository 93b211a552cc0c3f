"""repeat_kv: the kv heads of grouped-query attention, repeated for the
query heads (``kernels/repeat_kv.cl``).

``repeat_kv(x, n_rep)``: x is (B, HKV, S, d_k) -> (B, HKV * n_rep, S, d_k);
output head h is a copy of kv head h // n_rep. The backward adds the n_rep
copies' gradients back onto their kv head.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> kv = Tensor.from_host(queue, np.array([1.0, 2.0]).reshape(1, 2, 1, 1))
>>> F.repeat_kv(kv, 2).value.to_host().ravel()   # heads 0,1 <- 0; 2,3 <- 1
array([1., 1., 2., 2.], dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_int
from netcl_lite.core.work import FLOAT, counts


def repeat_kv(x, n_rep):
    """(B, HKV, S, d_k) -> (B, HKV * n_rep, S, d_k); n_rep == 1 returns x."""
    (x,) = nodes(x, op="repeat_kv")
    if len(x.shape) != 4:
        raise ValueError(f"repeat_kv: x must be (B, HKV, S, d_k), got shape {x.shape}")
    check_int(n_rep, "repeat_kv", "n_rep", low=1)
    if n_rep == 1:
        return x
    device = x.device
    B, HKV, S, d_k = x.shape
    n_rep = int(n_rep)
    inner = S * d_k
    out = Tensor.empty(device, (B, HKV * n_rep, S, d_k))  # (B, H, S, d_k)
    launch(device, "repeat_kv", "repeat_kv_forward", (out.size,), LOCAL_1D,
           x.value, out, B, HKV, n_rep, inner)

    def backward(g):
        gx = Tensor.empty(device, x.shape)           # (B, HKV, S, d_k)
        launch(device, "repeat_kv", "repeat_kv_backward", (gx.size,), LOCAL_1D,
               g, gx, B, HKV, n_rep, inner)
        return (gx,)

    return record(out, (x,), backward, "repeat_kv")


@counts("repeat_kv_forward")
def _forward_work(a):
    # x (B, HKV, inner) read, out (B, HKV n_rep, inner) written
    kv = a["B"] * a["HKV"] * a["inner"]
    return 0, FLOAT * kv * (1 + a["n_rep"])


@counts("repeat_kv_backward")
def _backward_work(a):
    # the n_rep copies of each value added
    kv = a["B"] * a["HKV"] * a["inner"]
    return kv * (a["n_rep"] - 1), FLOAT * kv * (1 + a["n_rep"])
