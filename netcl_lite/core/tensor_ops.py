"""Arithmetic on bare Tensors that records no gradient.

The tape uses ``add_tensors`` to sum the gradients that reach one node,
``clip_grad_norm`` rescales gradients with ``scale_tensor``, and the ops in
``functional/`` build on all three. They sit here, below ``autograd`` and
``functional``, so that no layer imports from a layer above it.

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> a = Tensor.from_host(queue, np.array([1.0, 2.0, 3.0]))
>>> scale_tensor(add_tensors(a, a), 0.5).to_host()
array([1., 2., 3.], dtype=float32)
>>> sum_tensor(a).to_host()
array(6., dtype=float32)
>>> chunks(10)          # (parts, chunk): 10 work-items of 1 value each
(10, 1)
>>> work_items(queue, 1_000_000)     # on a CPU: about 256 values each
3907
"""

import pyopencl as cl

from netcl_lite.core.device import device_of
from netcl_lite.core.program import LOCAL_1D, ceil_div, launch
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.work import FLOAT, counts

PARTS = 64  # pass-1 work-items of a sum: enough to fill the cores, few to add
# Values per work-item of an elementwise kernel on a CPU (kernels/runs.cl
# explains why a run of values, not one). Measured on PoCL with 720K values:
# 64 to 1024 all ran at 15-18 GB/s (silu) or ~120 GB/s (a copy, in cache);
# 4096 left too few work-groups to keep both cores busy.
CPU_RUN = 256


def work_items(device, n):
    """How many work-items an elementwise kernel over n values gets on a
    device (a Device or a queue): about n / CPU_RUN on a CPU (each loops
    over a contiguous run), n elsewhere (a GPU, and a simulator standing in
    for one: one value each)."""
    return ceil_div(n, CPU_RUN) if device_of(device).kind == "cpu" else n


def chunks(n):
    """(parts, chunk): split n values into at most PARTS contiguous chunks."""
    parts = min(PARTS, max(n, 1))
    chunk = ceil_div(n, parts) if n else 1
    return parts, chunk


def add_tensors(a, b):
    """a + b, same shapes (``kernels/elementwise.cl:add_forward``)."""
    device = a.device
    out = Tensor.empty(device, a.shape)
    launch(device, "elementwise", "add_forward",
           (work_items(device, a.size),), LOCAL_1D,
           a, b, out, a.size)
    return out


def scale_tensor(x, c):
    """c * x for a Python number c (``elementwise.cl:scale_forward``)."""
    device = x.device
    out = Tensor.empty(device, x.shape)
    launch(device, "elementwise", "scale_forward",
           (work_items(device, x.size),), LOCAL_1D,
           x, out, float(c), x.size)
    return out


@counts("add_forward")
def _add_work(a):
    return a["n"], 3 * FLOAT * a["n"]      # reads a and b, writes out


@counts("scale_forward")
def _scale_work(a):
    return a["n"], 2 * FLOAT * a["n"]


def sum_tensor(x):
    """Sum of every value -> a 0-d Tensor, in two deterministic passes
    (``kernels/reduce.cl``)."""
    device, n = x.device, x.size
    parts, chunk = chunks(n)
    partial = Tensor.empty(device, (parts,))
    out = Tensor.empty(device, ())
    launch(device, "reduce", "sum_partial", (parts,), LOCAL_1D,
           x, partial, n, chunk, parts)
    launch(device, "reduce", "sum_final", (1,), LOCAL_1D, partial, out, parts)
    return out


@counts("sum_partial")
def _sum_partial_work(a):
    return a["n"], FLOAT * (a["n"] + a["parts"])


@counts("sum_final")
def _sum_final_work(a):
    return a["parts"], FLOAT * (a["parts"] + 1)


def last_position(x):
    """x (B, S, D) -> (B, 1, D), the last position of every row, copied on
    the device (one rectangular copy, no kernel, no trip to the host).

    >>> import numpy as np
    >>> from netcl_lite.core.device import manager
    >>> queue = manager.default("cpu").queue
    >>> x = Tensor.from_host(queue, np.arange(12.0).reshape(2, 3, 2))
    >>> last_position(x).to_host()
    array([[[ 4.,  5.]],
    <BLANKLINE>
           [[10., 11.]]], dtype=float32)
    """
    B, S, D = x.shape
    if S == 1:
        return x
    out = Tensor.empty(x.device, (B, 1, D), x.dtype)
    row = D * x.dtype.itemsize                      # bytes of one position
    if B and row:
        cl.enqueue_copy(x.queue, out.buffer, x.buffer,
                        src_origin=((S - 1) * row, 0), dst_origin=(0, 0),
                        region=(row, B), src_pitches=(S * row,),
                        dst_pitches=(row,))
    return out
