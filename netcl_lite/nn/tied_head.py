"""``TiedHead``: an output head that reuses the token embedding table.

The embedding maps token t to row t of E (V, D); a head maps a vector x
(D,) to V logits. A tied head uses the same table for both: logit t is
x . E[t], so logits = x E^T. Small models do this to save V x D weights
(SmolLM2-135M: 28M of its 135M), and a token's input vector and its output
direction are then one vector (Press and Wolf, 2017).

``F.linear`` reads E^T where E lies, so nothing is copied. The head has no
parameter of its own: ``named_parameters`` lists E once, under the
embedding, and a gradient reaching E sums what the embedding and the head
send it.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> from netcl_lite.nn.embedding import Embedding
>>> queue = manager.default("cpu").queue
>>> emb = Embedding(queue, 10, 4, seed=0)
>>> head = TiedHead(emb)
>>> x = Tensor.from_host(queue, np.ones((2, 3, 4)))
>>> head(x).shape                                     # (B, S, D) -> (B, S, V)
(2, 3, 10)
>>> list(head.named_parameters())                     # E belongs to emb
[]
"""

import netcl_lite.functional as F
from netcl_lite.nn.module import Module


class TiedHead(Module):
    def __init__(self, embedding):
        self.embedding = embedding          # its .weight is E (V, D)
        self.d_in, self.d_out = embedding.dim, embedding.num_embeddings

    def named_parameters(self, prefix=""):
        """None: the table is the embedding's parameter, listed there once."""
        return iter(())

    def forward(self, x):
        if x.shape[-1] != self.d_in:
            raise ValueError(
                f"TiedHead expects last dim {self.d_in}, got input shape "
                f"{x.shape}"
            )
        return F.linear(x, self.embedding.weight)   # (..., D) @ E^T -> (..., V)
