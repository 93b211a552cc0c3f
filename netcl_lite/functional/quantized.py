"""A product with a quantised weight matrix, y = x W^T (chapter 14).

``quantized_matmul(x, w)``: x is (..., cols), w a ``QuantizedWeight``
(rows, cols) kept in its GGUF blocks (``core/quantized.py``); the result
is (..., rows), as ``Linear`` computes it with W^T as its weight. The
backward gives x its gradient, dx = dy W, read from the same blocks; the
weight gets none (a quantised weight is not trained).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.quantized import QuantizedWeight
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> q = np.arange(32) % 16                   # the codes 0..15, twice
>>> w = np.array([q, -q], np.float32)         # Q4_1 holds it exactly:
>>> qw = QuantizedWeight.from_float(queue, w, "Q4_1")   # d = 1, m = 0 or -15
>>> x = Tensor.from_host(queue, np.ones((1, 32)))
>>> F.quantized_matmul(x, qw).value.to_host()        # (1, 32) @ (32, 2)
array([[ 240., -240.]], dtype=float32)

Three ways to compute it, chosen by the number of rows of x (M, all
leading dims together):

- M < FEW_ROWS (8), decoding: a matrix-vector kernel per format reads the
  blocks directly (``kernels/quant.cl``: ``quant_matvec_q4_1`` and its
  siblings), memory-bound;
- M >= FEW_ROWS, prefill: compute-bound, so W is dequantised into float32,
  at most SCRATCH_BYTES of rows at a time, and multiplied by the tuned
  float32 matmul (``functional/matmul.py``); the float rows are scratch,
  given back as soon as the chunk is done;
- ``fast=False``: the simple kernels of ``kernels/quant_simple.cl``, one
  work-item per output value, the reference the other two are tested
  against.

>>> F.quantized_matmul(x, qw, fast=False).value.to_host()
array([[ 240., -240.]], dtype=float32)

The backward takes the same routes: ``quant_matvec_t`` for a few rows,
chunks of float32 rows for many, ``quant_matmul_t_simple`` when
``fast=False``.
"""

import math

import pyopencl as cl

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, LOCAL_2D, launch, local_1d
from netcl_lite.core.quantized import BLOCK, QuantizedWeight
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.tensor_ops import add_tensors
from netcl_lite.core.validate import min_ndim, same_queue
from netcl_lite.functional.matmul import FEW_ROWS, matmul_strided

# At most this many bytes of float32 rows of W at once (prefill): the
# (49152 x 576) tied head of SmolLM2 would take 113 MB in one piece.
SCRATCH_BYTES = 8 << 20
# the matrix-vector kernel of each format, and whether it reads x's block sums
MATVEC = {"Q4_0": ("quant_matvec_q4_0", True),
          "Q4_1": ("quant_matvec_q4_1", True),
          "Q8_0": ("quant_matvec_q8_0", False),
          "F16": ("quant_matvec_f16", False)}


def _check(x, w, op):
    if not isinstance(w, QuantizedWeight):
        raise ValueError(f"{op}: w must be a QuantizedWeight, got "
                         f"{type(w).__name__}")
    min_ndim(x, 1, op, "x")
    if x.shape[-1] != w.cols:
        raise ValueError(f"{op}: x is {x.shape}, its last dim must be the "
                         f"weight's cols = {w.cols} (w is {w.qtype} "
                         f"({w.rows}, {w.cols}))")
    same_queue(x.value, w.queue, op, "x", "the weight")


def chunk_rows(w):
    """Rows of W dequantised at once: all of them, or a multiple of 64
    that keeps a chunk within SCRATCH_BYTES."""
    fit = SCRATCH_BYTES // (4 * w.cols)
    return w.rows if fit >= w.rows else max(64, fit // 64 * 64)


def dequantized_rows(w, r0, n):
    """Rows r0 .. r0 + n of W as a float32 Tensor (n, cols), one
    work-item per block (``quant.cl: quant_dequantize_blocks``)."""
    out = Tensor.empty(w.queue, (n, w.cols))
    launch(w.queue, "quant", "quant_dequantize_blocks",
           (w.cols // BLOCK, n), LOCAL_2D, w.scales, w.quants, out, w.code,
           r0, n, w.cols)
    return out


def _copy_columns(src, dst, src_col, dst_col, width, M):
    """dst[:, dst_col:dst_col + width] = src[:, src_col:src_col + width]
    for two float32 (M, ...) Tensors: one rectangular copy, no kernel."""
    cl.enqueue_copy(src.queue, dst.buffer, src.buffer,
                    src_origin=(4 * src_col, 0), dst_origin=(4 * dst_col, 0),
                    region=(4 * width, M), src_pitches=(4 * src.shape[1],),
                    dst_pitches=(4 * dst.shape[1],))


def matvec(x, w, M):
    """y (M, rows) = x (M, cols) @ W^T for M < FEW_ROWS, from the blocks."""
    queue = w.queue
    y = Tensor.empty(queue, (M, w.rows))
    kernel, with_sums = MATVEC[w.qtype]
    if with_sums:   # sums of x over each block: the 4-bit formats' offsets
        sums = Tensor.empty(queue, (M, w.cols // BLOCK))
        launch(queue, "quant", "quant_block_sums", (sums.size,), LOCAL_1D,
               x, sums, sums.size)
        launch(queue, "quant", kernel, (w.rows,), LOCAL_1D, x, sums,
               w.scales, w.quants, y, M, w.rows, w.cols)
    else:
        launch(queue, "quant", kernel, (w.rows,), LOCAL_1D, x, w.scales,
               w.quants, y, M, w.rows, w.cols)
    return y


def prefill(x, w, M):
    """y (M, rows) = x (M, cols) @ W^T for many rows: float32 chunks of W's
    rows, each multiplied by the tuned matmul (W^T read by strides)."""
    step = chunk_rows(w)
    y = None if step >= w.rows else Tensor.empty(w.queue, (M, w.rows))
    for r0 in range(0, w.rows, step):
        n = min(step, w.rows - r0)
        wf = dequantized_rows(w, r0, n)                  # (n, cols)
        part = matmul_strided(x, wf, 1, M, n, w.cols, (M * w.cols, w.cols, 1),
                              (0, 1, w.cols))            # (M, n)
        if y is None:
            return part.reshape(M, n)
        _copy_columns(part.reshape(M, n), y, 0, r0, n, M)
    return y


def input_grad(g, w, M, fast):
    """dx (M, cols) = dy (M, rows) @ W, from the blocks (no weight grad)."""
    queue = w.queue
    if fast is False:
        dx = Tensor.empty(queue, (M, w.cols))
        launch(queue, "quant_simple", "quant_matmul_t_simple", (w.cols, M),
               LOCAL_2D, g, w.scales, w.quants, dx, w.code, M, w.rows, w.cols)
        return dx
    if M < FEW_ROWS:
        dx = Tensor.empty(queue, (M, w.cols))
        items = M * (w.cols // BLOCK)                    # a block column each
        launch(queue, "quant", "quant_matvec_t", (items,), local_1d(items),
               g, w.scales, w.quants, dx, w.code, M, w.rows, w.cols)
        return dx
    step = chunk_rows(w)
    dx = None
    for r0 in range(0, w.rows, step):
        n = min(step, w.rows - r0)
        gc = g
        if n < w.rows:   # this chunk's columns of dy, (M, n)
            gc = Tensor.empty(queue, (M, n))
            _copy_columns(g, gc, r0, 0, n, M)
        wf = dequantized_rows(w, r0, n)                  # (n, cols)
        part = matmul_strided(gc, wf, 1, M, w.cols, n, (M * n, n, 1),
                              (0, w.cols, 1)).reshape(M, w.cols)
        dx = part if dx is None else add_tensors(dx, part)
    return dx


def quantized_matmul(x, w, fast=None):
    """x (..., cols) @ W^T -> (..., rows), W a ``QuantizedWeight``.

    ``fast=None`` (or True) chooses by the rows of x (the module's
    docstring); ``fast=False`` runs the simple kernels, forward and
    backward."""
    (x,) = nodes(x, op="quantized_matmul")
    if fast not in (None, True, False):
        raise ValueError(f"quantized_matmul: fast must be None, True or "
                         f"False, got {fast!r}")
    fast = None if fast is None else bool(fast)          # 0 and 1 too
    _check(x, w, "quantized_matmul")
    *lead, cols = x.shape
    M = math.prod(lead)
    xv = x.value.reshape(M, cols)                        # (M, cols)
    if M == 0:
        out = Tensor.empty(w.queue, (M, w.rows))
    elif fast is False:
        out = Tensor.empty(w.queue, (M, w.rows))
        launch(w.queue, "quant_simple", "quant_matmul_simple", (w.rows, M),
               LOCAL_2D, xv, w.scales, w.quants, out, w.code, M, w.rows, cols)
    elif M < FEW_ROWS:
        out = matvec(xv, w, M)
    else:
        out = prefill(xv, w, M)
    out = out.reshape(*lead, w.rows)                     # (..., rows)

    def backward(g):
        if M == 0:
            return (Tensor.empty(w.queue, x.shape),)
        dx = input_grad(g.reshape(M, w.rows), w, M, fast)  # (M, cols)
        return (dx.reshape(x.shape),)

    return record(out, (x,), backward, "quantized_matmul")
