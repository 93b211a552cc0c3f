"""reshape, permute and transpose: moving values without arithmetic
(``kernels/permute.cl``).

Multi-head attention splits the model dimension into heads and moves the
head axis next to the batch, so each head is one (S, d_k) matrix:

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, np.arange(12.0).reshape(1, 3, 4))  # (B, S, D)
>>> h = F.reshape(x, (1, 3, 2, 2))                     # (B, S, H, d_k)
>>> h = F.transpose(h, 1, 2)                           # (B, H, S, d_k)
>>> h.value.to_host()[0, 1]                            # head 1, every token
array([[ 2.,  3.],
       [ 6.,  7.],
       [10., 11.]], dtype=float32)
"""

from netcl_lite.autograd import nodes, record
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor, resolve_shape
from netcl_lite.core.work import FLOAT, counts

MAX_DIMS = 4  # the kernel works on shapes padded to 4-D


def reshape(x, shape):
    """A view with a new shape (one entry may be -1); no kernel runs.

    Tensors are contiguous, so only the shape changes. Backward: the
    gradient is reshaped back. Works on int32 ids too (they get no gradient).
    (2, 6) with shape (3, -1) -> (3, 4).
    """
    (x,) = nodes(x, dtype=None, op="reshape")
    shape = resolve_shape(x.shape, shape)  # ValueError names both shapes
    old = x.shape

    def backward(g):
        return (g.reshape(old),)

    return record(x.value.reshape(shape), (x,), backward, "reshape")


def _contiguous_strides(shape):
    """(2, 3, 4) -> (12, 4, 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _normalize_axes(shape, axes, op):
    ndim = len(shape)
    if not 1 <= ndim <= MAX_DIMS:
        raise ValueError(
            f"{op}: supports 1 to {MAX_DIMS} dims, got ndim {ndim} "
            f"(shape {shape})"
        )
    axes = tuple(int(a) for a in axes)
    if len(axes) != ndim:
        raise ValueError(
            f"{op}: axes {axes} has {len(axes)} entries, shape {shape} "
            f"has ndim {ndim}"
        )
    if any(not -ndim <= a < ndim for a in axes):
        raise ValueError(f"{op}: axes {axes} out of range for ndim {ndim}")
    axes = tuple(a % ndim for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError(
            f"{op}: axes {axes} is not a permutation of 0..{ndim - 1}"
        )
    return axes


def _launch_args(shape, axes):
    """Sizes and strides for permute.cl: shape and axes padded to 4-D."""
    pad = MAX_DIMS - len(shape)
    shape4 = (1,) * pad + tuple(shape)
    axes4 = tuple(range(pad)) + tuple(a + pad for a in axes)
    in_strides = _contiguous_strides(shape4)
    out4 = [shape4[a] for a in axes4]              # (o0, o1, o2, o3)
    strides = [in_strides[a] for a in axes4]       # (s0, s1, s2, s3)
    return (*out4[1:], *strides)


def _keeps_order(shape, axes):
    """True when permuting moves only size-1 axes: (1, 5, 3), (1, 0, 2) ->
    True; (2, 5, 3), (1, 0, 2) -> False."""
    kept = [a for a in axes if shape[a] != 1]
    return kept == sorted(kept)


def permute(x, axes):
    """x with its axes reordered: out.shape[k] = x.shape[axes[k]].

    The output is contiguous. 1 to 4 dims; negative axes count from
    the end. (B, S, H, d_k) with axes (0, 2, 1, 3) -> (B, H, S, d_k).
    Backward: permute the gradient by the inverse axes.

    When only axes of size 1 move, the values keep their order in memory
    and the output is a view, as ``reshape`` gives (no kernel runs): one
    decoding step's (B, 1, H, d_k) -> (B, H, 1, d_k) is such a case.
    """
    (x,) = nodes(x, op="permute")
    axes = _normalize_axes(x.shape, axes, "permute")
    device, n = x.device, x.value.size
    out_shape = tuple(x.shape[a] for a in axes)
    if _keeps_order(x.shape, axes):
        old = x.shape
        return record(x.value.reshape(out_shape), (x,),
                      lambda g: (g.reshape(old),), "permute")
    args = _launch_args(x.shape, axes)
    out = Tensor.empty(device, out_shape)
    rows = n // args[2] if n else 0                # rows of o3 output values
    launch(device, "permute", "permute_forward", (rows,), LOCAL_1D,
           x.value, out, *args, rows)

    def backward(g):
        gx = Tensor.empty(device, x.shape)
        # the same index map as the forward, walked as a scatter
        launch(device, "permute", "permute_backward", (rows,), LOCAL_1D,
               g, gx, *args, rows)
        return (gx,)

    return record(out, (x,), backward, "permute")


@counts("permute_forward", "permute_backward")
def _permute_work(a):
    # a gather of rows: every value read once and written once
    rows = a["rows"] * a["o3"] if "o3" in a else a["rows"]
    return 0, 2 * FLOAT * rows


def transpose(x, dim0, dim1):
    """Swap two axes (a permute): (B, S, H, d_k) with 1, 2 -> (B, H, S, d_k)."""
    (x,) = nodes(x, op="transpose")
    ndim = len(x.shape)
    for d in (dim0, dim1):
        if not -ndim <= int(d) < ndim:
            raise ValueError(
                f"transpose: dim {d} out of range for shape {x.shape} "
                f"(ndim {ndim})"
            )
    axes = list(range(ndim))
    a, b = int(dim0) % ndim, int(dim1) % ndim
    axes[a], axes[b] = axes[b], axes[a]
    return permute(x, axes)

