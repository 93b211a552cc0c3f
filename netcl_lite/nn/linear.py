"""``Linear``: y = x @ W with W of shape (d_in, d_out), no bias.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> lin = Linear(queue, 3, 2, seed=0)
>>> lin(Tensor.from_host(queue, np.ones((5, 3)))).shape  # (5, 3) @ (3, 2)
(5, 2)

``apply_weight(x, w)`` is the product every layer uses for its weights:
x @ w for a weight parameter (d_in, d_out), and ``w(x)`` for a layer that
keeps its weight in another form (a quantised one, read from a file), so
that attention and SwiGLU work the same with either:

>>> apply_weight(Tensor.from_host(queue, np.ones((5, 3))), lin).shape
(5, 2)
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.nn.module import Module, normal_init, parameter


def apply_weight(x, weight):
    """x @ weight for a (d_in, d_out) node; weight(x) for a module."""
    if isinstance(weight, Module):
        return weight(x)                 # (..., d_in) -> (..., d_out)
    return F.matmul(x, weight)           # (..., d_in) @ (d_in, d_out)


class Linear(Module):
    def __init__(self, queue, d_in, d_out, seed=0):
        rng = np.random.default_rng(seed)
        self.d_in, self.d_out = d_in, d_out
        self.weight = parameter(queue, normal_init(rng, d_in, (d_in, d_out)),
                                "weight")

    def forward(self, x):
        if x.shape[-1] != self.d_in:
            raise ValueError(
                f"Linear expects last dim {self.d_in}, got input shape {x.shape}"
            )
        return F.matmul(x, self.weight)  # (..., d_in) @ (d_in, d_out)
