"""Batched matrix product (``kernels/matmul.cl``).

``matmul(a, b)``: a is (..., M, K); b is (..., K, N) with the same leading
dims, or a plain (K, N) matrix shared by every batch (as in ``Linear``).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> a = Tensor.from_host(queue, [[1.0, 2.0], [3.0, 4.0]])
>>> F.matmul(a, a).value.to_host()
array([[ 7., 10.],
       [15., 22.]], dtype=float32)

Two kernels compute the same product. ``matmul_forward`` is the simple one
(one work-item per output value): the chapters read it and the tests use it
as the oracle. ``matmul_packed`` copies A and B into panels and keeps a
6 x 16 tile of C in registers (about 0.8-1x numpy's speed on a CPU); it runs
whenever the product is big enough to pay for the packing.
``F.matmul(a, b, fast=False)`` (or ``F.matmul_simple``) forces the simple one:

>>> F.matmul_simple(a, a).value.to_host()
array([[ 7., 10.],
       [15., 22.]], dtype=float32)
"""

import math

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, LOCAL_2D, ceil_div, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import min_ndim

MR, NR = 6, 16          # the register tile of matmul_packed (kernels/matmul.cl)
FAST_MIN_MNK = 48 ** 3  # below: the simple kernel is faster (3 launches vs 1)


def matmul_simple_strided(a, b, batch, M, N, K, a_strides, b_strides):
    """C (batch, M, N) = A @ B, one work-item per value of C."""
    out = Tensor.empty(a.queue, (batch, M, N))
    launch(a.queue, "matmul", "matmul_forward", (N, batch * M), LOCAL_2D,
           a, b, out, batch, M, N, K, *a_strides, *b_strides)
    return out


def _row_blocks(batch, PM, PN):
    """Row panels per work-item: 16 (96 rows), fewer when that would leave
    under 16 work-groups of 64: the cores share out whole groups, so a few
    big ones leave a core idle at the end."""
    RB = 16
    while RB > 1 and batch * ceil_div(PM, RB) * PN < 16 * 64:
        RB //= 2
    return RB


def matmul_packed_strided(a, b, batch, M, N, K, a_strides, b_strides):
    """C (batch, M, N) = A @ B through packed panels (same strides)."""
    queue = a.queue
    out = Tensor.empty(queue, (batch, M, N))
    if M == 0 or N == 0:
        return out
    if K == 0:
        return matmul_simple_strided(a, b, batch, M, N, K, a_strides, b_strides)
    PM, PN = ceil_div(M, MR), ceil_div(N, NR)
    # a matrix with batch stride 0 serves every batch: pack it once
    a_batch = 1 if a_strides[0] == 0 else batch
    b_batch = 1 if b_strides[0] == 0 else batch
    Ap = Tensor.empty(queue, (a_batch, PM, K, MR))
    Bp = Tensor.empty(queue, (b_batch, PN, K, NR))
    launch(queue, "matmul", "matmul_pack_a", (K, a_batch * PM), LOCAL_2D,
           a, Ap, a_batch, M, K, *a_strides)
    launch(queue, "matmul", "matmul_pack_b", (K, b_batch * PN), LOCAL_2D,
           b, Bp, b_batch, K, N, *b_strides)
    RB = _row_blocks(batch, PM, PN)
    ap_bs = np.int64(0 if a_batch == 1 else PM * K * MR)
    bp_bs = np.int64(0 if b_batch == 1 else PN * K * NR)
    launch(queue, "matmul", "matmul_packed", (batch * ceil_div(PM, RB) * PN,),
           LOCAL_1D, Ap, Bp, out, batch, M, N, K, RB, ap_bs, bp_bs)
    return out


def matmul_strided(a, b, batch, M, N, K, a_strides, b_strides, fast=None):
    """C (batch, M, N) = A @ B for raw buffers read through strides.

    Element (b, i, k) of A is ``a[b*a_bs + i*a_rs + k*a_cs]`` with
    ``a_strides = (a_bs, a_rs, a_cs)``; likewise B. ``fast=None`` picks the
    packed kernel when M*N*K >= FAST_MIN_MNK; True/False force a path.
    """
    if fast is None:
        fast = M * N * K >= FAST_MIN_MNK
    run = matmul_packed_strided if fast else matmul_simple_strided
    return run(a, b, batch, M, N, K, a_strides, b_strides)


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


def matmul(a, b, fast=None):
    """a @ b, batched over the leading dims (``fast``: see matmul_strided)."""
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
    b_bs = 0 if shared_b else K * N
    out = matmul_strided(av, bv, batch, M, N, K, (M * K, K, 1),
                         (b_bs, N, 1), fast).reshape(out_shape)

    def backward(g):
        # grad_a = g @ b^T : (batch, M, N) @ (batch, N, K); b^T read by strides
        ga = matmul_strided(g, bv, batch, M, K, N,
                            (M * N, N, 1), (b_bs, 1, N), fast)
        # grad_b = a^T @ g : (batch, K, M) @ (batch, M, N)
        gb = matmul_strided(av, g, batch, K, N, M,
                            (M * K, 1, K), (M * N, N, 1), fast)
        return ga.reshape(a.shape), gb.reshape(b.shape)

    return record(out, (a, b), backward, "matmul")


def matmul_simple(a, b):
    """``matmul`` on the simple kernel only (the chapters' version, the oracle)."""
    return matmul(a, b, fast=False)
