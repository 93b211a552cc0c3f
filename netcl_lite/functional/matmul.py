"""Batched matrix product (``kernels/matmul.cl``).

``matmul(a, b)``: a is (..., M, K); b is (..., K, N) with the same leading
dims, or a plain (K, N) matrix shared by every batch (as in ``Linear``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> q = manager.default("cpu").queue
>>> a = Tensor.from_host(q, [[1.0, 2.0], [3.0, 4.0]])
>>> F.matmul(a, a).value.to_host()
array([[ 7., 10.],
       [15., 22.]], dtype=float32)
"""

import math

from netcl_lite.autograd import record
from netcl_lite.core.program import LOCAL_2D, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.checks import min_ndim, nodes


def matmul_strided(a, b, batch, M, N, K, a_strides, b_strides):
    """C (batch, M, N) = A @ B for raw buffers read through strides."""
    out = Tensor.empty(a.queue, (batch, M, N))
    launch(a.queue, "matmul", "matmul_forward", (N, batch * M), LOCAL_2D,
           a, b, out, batch, M, N, K, *a_strides, *b_strides)
    return out


def _check(a, b):
    min_ndim(a, 2, "matmul", "a")
    min_ndim(b, 2, "matmul", "b")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul: inner sizes differ: a is {a.shape} (K={a.shape[-1]}), "
            f"b is {b.shape} (K={b.shape[-2]})"
        )
    if len(b.shape) > 2 and a.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            f"matmul: batch dims differ: a {a.shape[:-2]} vs b {b.shape[:-2]}"
        )


def matmul(a, b):
    """a @ b, batched over the leading dims."""
    a, b = nodes(a, b, op="matmul")
    _check(a, b)
    *lead, M, K = a.shape
    N = b.shape[-1]
    shared_b = len(b.shape) == 2
    if shared_b:  # fold the batch into the rows: (..., M, K) -> (1, R, K)
        batch, M = 1, math.prod(lead) * M
    else:
        batch = math.prod(lead)
    out_shape = (*lead, a.shape[-2], N)
    av, bv = a.value, b.value
    out = matmul_strided(av, bv, batch, M, N, K,
                         (M * K, K, 1), (K * N, N, 1)).reshape(out_shape)

    def backward(g):
        # grad_a = g @ b^T : (batch, M, N) @ (batch, N, K); b^T read by strides
        ga = matmul_strided(g, bv, batch, M, K, N,
                            (M * N, N, 1), (K * N, 1, N))
        # grad_b = a^T @ g : (batch, K, M) @ (batch, M, N)
        gb = matmul_strided(av, g, batch, K, N, M,
                            (M * K, 1, K), (M * N, N, 1))
        return ga.reshape(a.shape), gb.reshape(b.shape)

    return record(out, (a, b), backward)
