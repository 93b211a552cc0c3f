"""Operands of a strided product, as matmul's backward reads them.

``strided_operands(queue, rng, batch, M, N, K, transpose_a, transpose_b,
shared_b)`` -> (A, B, a_strides, b_strides, am, bm): device tensors stored
transposed or not, the strides that read them as (batch, M, K) @ (batch or
1, K, N), and the same operands as numpy arrays in that layout.
"""

import numpy as np

from netcl_lite.core.tensor import Tensor


def strided_operands(queue, rng, batch, M, N, K, transpose_a, transpose_b,
                     shared_b):
    def rand(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    a = rand(batch, K, M) if transpose_a else rand(batch, M, K)
    b = rand(1 if shared_b else batch, *((N, K) if transpose_b else (K, N)))
    a_st = (M * K, 1, M) if transpose_a else (M * K, K, 1)
    b_bs = 0 if shared_b else K * N
    b_st = (b_bs, 1, K) if transpose_b else (b_bs, N, 1)
    am = np.swapaxes(a, 1, 2) if transpose_a else a
    bm = np.swapaxes(b, 1, 2) if transpose_b else b
    return (Tensor.from_host(queue, a), Tensor.from_host(queue, b),
            a_st, b_st, am, bm)
