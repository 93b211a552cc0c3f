"""``SwiGLU``: the gated feed-forward network of LLaMA-style decoder blocks
(chapter 09).

    FFN(x) = (silu(x W_gate) * (x W_up)) W_down

The gate decides, feature by feature, how much of the "up" projection
passes; silu(z) = z * sigmoid(z) is a smooth, non-monotone ReLU. Three
matrices of (dim, hidden), (dim, hidden) and (hidden, dim): with
hidden = 8/3 dim the block costs as much as a 4 dim ReLU MLP.
``F.swiglu(a, b)`` computes silu(a) * b in one kernel (``kernels/swiglu.cl``),
the same formula as ``F.mul(F.silu(a), b)`` with one pass over memory.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> ffn = SwiGLU(queue, dim=8, hidden_dim=24, seed=0)
>>> ffn(Tensor.from_host(queue, np.ones((2, 3, 8)))).shape   # (B, S, D)
(2, 3, 8)
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.validate import check_int
from netcl_lite.nn.linear import apply_weight
from netcl_lite.nn.module import Module, normal_init, parameter


class SwiGLU(Module):
    def __init__(self, queue, dim, hidden_dim, seed=0):
        self.dim = check_int(dim, "SwiGLU", "dim", low=1)
        self.hidden_dim = check_int(hidden_dim, "SwiGLU", "hidden_dim", low=1)
        rng = np.random.default_rng(seed)  # one stream, drawn in a fixed order
        self.w_gate = parameter(queue, normal_init(rng, dim, (dim, hidden_dim)),
                                "w_gate")
        self.w_up = parameter(queue, normal_init(rng, dim, (dim, hidden_dim)),
                              "w_up")
        self.w_down = parameter(queue,
                                normal_init(rng, hidden_dim, (hidden_dim, dim)),
                                "w_down")

    def forward(self, x):
        if x.shape[-1] != self.dim:
            raise ValueError(
                f"SwiGLU expects last dim {self.dim}, got input shape {x.shape}"
            )
        gate = apply_weight(x, self.w_gate)            # (..., hidden)
        up = apply_weight(x, self.w_up)                # (..., hidden)
        hidden = F.swiglu(gate, up)                    # silu(gate) * up
        return apply_weight(hidden, self.w_down)       # (..., D)
