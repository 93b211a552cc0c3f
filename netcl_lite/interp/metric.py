"""A metric of the logits that is linear in them: the sum of
``weights * logits`` for a fixed (B, S, V) array of weights. The same
object scores a logits array (activation patching, ablations) and a
logits node (``activation_grads``: attribution patching), so both are
measured by one definition.

``LogitMetric.target_logit(targets, mask, V)`` is the mean, over the
positions where ``mask`` is True, of the target id's logit minus the mean
logit over the vocabulary (a logit difference against the average id: a
shift of every logit by the same amount leaves it unchanged).

>>> import numpy as np
>>> logits = np.zeros((1, 3, 4))
>>> logits[0, 1, 2] = 8.0                       # position 1 favours id 2
>>> metric = LogitMetric.target_logit(np.array([[0, 2, 0]]),
...                                   np.array([[False, True, False]]), 4)
>>> metric(logits)                              # 8 - 8/4
6.0
"""

import numpy as np

import netcl_lite.functional as F
from netcl_lite.autograd import Node
from netcl_lite.core.tensor import Tensor


class LogitMetric:
    """metric(logits) = sum(weights * logits); weights (B, S, V)."""

    def __init__(self, weights):
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 3:
            raise ValueError(f"LogitMetric: weights must be (B, S, V), got shape "
                             f"{weights.shape}")
        self.weights = weights

    @classmethod
    def target_logit(cls, targets, mask, vocab_size):
        """Mean over the masked positions of logit[target] - mean(logits)."""
        targets, mask = np.asarray(targets), np.asarray(mask, dtype=bool)
        if targets.shape != mask.shape or targets.ndim != 2:
            raise ValueError(f"target_logit: targets {targets.shape} and mask "
                             f"{mask.shape} must both be (B, S)")
        if not mask.any():
            raise ValueError("target_logit: the mask selects no position")
        bad = targets[mask & ((targets < 0) | (targets >= vocab_size))]
        if bad.size:
            raise ValueError(f"target_logit: target id {bad[0]} is outside "
                             f"0..{vocab_size - 1}")
        w = np.zeros(mask.shape + (vocab_size,))                 # (B, S, V)
        b, s = np.nonzero(mask)
        w[b, s, targets[b, s]] = 1.0
        w[b, s] -= 1.0 / vocab_size
        return cls(w / mask.sum())

    def __call__(self, logits):
        """A float for an array, a scalar node for a node."""
        if isinstance(logits, Node):
            self._check(logits.shape)
            w = Tensor.from_host(logits.queue, self.weights.astype(np.float32))
            return F.sum(F.mul(logits, w))                       # shape ()
        logits = np.asarray(logits, dtype=np.float64)
        self._check(logits.shape)
        return float(np.sum(self.weights * logits))

    def _check(self, shape):
        if tuple(shape) != self.weights.shape:
            raise ValueError(f"LogitMetric: logits of shape {tuple(shape)}, "
                             f"weights of shape {self.weights.shape}")
