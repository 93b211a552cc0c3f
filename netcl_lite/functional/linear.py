"""``linear(x, w)``: x @ w^T, for a weight stored (out, in) (``kernels/matmul.cl``).

The course's ``Linear`` keeps W as (d_in, d_out) and computes x @ W. Files
from other tools store a weight the other way round, one row per output
(PyTorch's ``nn.Linear``, GGUF), and a tied output head reads the token
embedding table E (V, D) as if it were a (D, V) weight: logits = x E^T.
``linear`` multiplies by such a matrix where it lies: ``F.matmul``'s kernels
read B through strides, so B = w^T is w read with its strides swapped, and
no transposed copy is made.

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, [[1.0, 2.0, 3.0]])           # (M, K)
>>> w = Tensor.from_host(queue, [[1.0, 0.0, 0.0],
...                              [0.0, 1.0, 1.0]])           # (N, K)
>>> F.linear(x, w).value.to_host()                           # (M, N)
array([[1., 5.]], dtype=float32)

Backward: grad_x = g @ w and grad_w = g^T @ x, both read in place too.
"""

import math

from netcl_lite.autograd import nodes, record
from netcl_lite.core.validate import min_ndim
from netcl_lite.functional.matmul import matmul_strided


def _check(x, w):
    min_ndim(x, 1, "linear", "x (..., K)")
    if len(w.shape) != 2 or x.shape[-1] != w.shape[1]:
        raise ValueError(
            f"linear: w must be (N, K) with K = x's last size {x.shape[-1]}, "
            f"got x {x.shape} and w {w.shape}"
        )


def linear(x, w):
    """x (..., K) @ w^T for w (N, K) -> (..., N); the kernel is chosen by
    shape, as in ``F.matmul``."""
    x, w = nodes(x, w, op="linear")
    _check(x, w)
    *lead, K = x.shape
    N, M = w.shape[0], math.prod(lead)
    xv, wv = x.value, w.value
    # B (K, N) is w read across: element (k, n) = w[n * K + k]
    out = matmul_strided(xv, wv, 1, M, N, K, (M * K, K, 1), (0, 1, K))
    out = out.reshape((*lead, N))                           # (..., N)

    def backward(g):
        # grad_x = g @ w : (M, N) @ (N, K), w read as it lies
        gx = matmul_strided(g, wv, 1, M, K, N, (M * N, N, 1), (0, K, 1))
        # grad_w = g^T @ x : (N, M) @ (M, K), g read across
        gw = matmul_strided(g, xv, 1, N, K, M, (0, 1, N), (0, K, 1))
        return gx.reshape(x.shape), gw.reshape(w.shape)

    return record(out, (x, w), backward, "linear")
