"""``RMSNorm``: scale each row to unit root-mean-square, times a learned
gain (``F.rms_norm``, ``kernels/rms_norm.cl``; chapter 09).

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> norm = RMSNorm(queue, 2, eps=0.0)                # gain starts at 1
>>> np.round(norm(Tensor.from_host(queue, [[3.0, 4.0]])).value.to_host(), 4)
array([[0.8485, 1.1314]], dtype=float32)
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.core.validate import check_int
from netcl_lite.nn.module import Module, parameter


class RMSNorm(Module):
    def __init__(self, queue, dim, eps=1e-6):
        self.dim = check_int(dim, "RMSNorm", "dim", low=1)
        self.eps = float(eps)
        self.weight = parameter(queue, np.ones(dim), "weight")     # (D,)

    def forward(self, x):
        return F.rms_norm(x, self.weight, eps=self.eps)            # (..., D)
