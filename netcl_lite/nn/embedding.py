"""``Embedding``: row t of the table E (V, D) is the vector of token t.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> emb = Embedding(queue, 10, 4, seed=0)
>>> emb(Tensor.from_host(queue, np.array([[1, 2, 1]]))).shape  # (B, S) -> (B, S, D)
(1, 3, 4)
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.nn.module import Module, normal_init, parameter


class Embedding(Module):
    def __init__(self, queue, num_embeddings, dim, seed=0):
        rng = np.random.default_rng(seed)
        self.num_embeddings, self.dim = num_embeddings, dim
        # N(0, 1): normal_init with fan_in 1 draws the same numbers
        self.weight = parameter(queue, normal_init(rng, 1, (num_embeddings, dim)),
                                "weight")

    def forward(self, ids):
        return F.embedding(self.weight, ids)  # (...) -> (..., D)
