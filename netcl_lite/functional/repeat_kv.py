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

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor


def repeat_kv(x, n_rep):
    """(B, HKV, S, d_k) -> (B, HKV * n_rep, S, d_k); n_rep == 1 returns x."""
    (x,) = nodes(x, op="repeat_kv")
    if len(x.shape) != 4:
        raise ValueError(f"repeat_kv: x must be (B, HKV, S, d_k), got shape {x.shape}")
    if isinstance(n_rep, bool) or not isinstance(n_rep, (int, np.integer)) \
            or n_rep < 1:
        raise ValueError(f"repeat_kv: n_rep must be an int >= 1, got {n_rep!r}")
    if n_rep == 1:
        return x
    queue = x.queue
    B, HKV, S, d_k = x.shape
    n_rep = int(n_rep)
    inner = S * d_k
    out = Tensor.empty(queue, (B, HKV * n_rep, S, d_k))  # (B, H, S, d_k)
    launch(queue, "repeat_kv", "repeat_kv_forward", (out.size,), LOCAL_1D,
           x.value, out, B, HKV, n_rep, inner)

    def backward(g):
        gx = Tensor.empty(queue, x.shape)            # (B, HKV, S, d_k)
        launch(queue, "repeat_kv", "repeat_kv_backward", (gx.size,), LOCAL_1D,
               g, gx, B, HKV, n_rep, inner)
        return (gx,)

    return record(out, (x,), backward, "repeat_kv")
