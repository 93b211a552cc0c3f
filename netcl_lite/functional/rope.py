"""Rotary position embedding, RoPE (``kernels/rope.cl``; chapter 06).

``rope(x, base=10000.0, offset=0, scale=1.0)``: x is (..., S, d) with d
even. The pair (x[2i], x[2i+1]) of the row at position m = offset + s turns
by scale * m * theta_i, theta_i = base ** (-2i / d). Turning q and k this way
makes q . k depend only on their distance; ``offset`` places the rows later
in a sequence (a cache). ``scale`` < 1 squeezes positions (position
interpolation, chapter 12); ``scale=0`` turns nothing (no position encoding).

>>> import numpy as np
>>> import netcl_lite.functional as F
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import I32, Tensor
>>> queue = manager.default("cpu").queue
>>> x = Tensor.from_host(queue, [[1.0, 0.0], [1.0, 0.0]])  # (S=2, d=2)
>>> np.round(F.rope(x).value.to_host(), 4)   # row 1 turns by 1 rad
array([[1.    , 0.    ],
       [0.5403, 0.8415]], dtype=float32)
>>> np.round(F.rope(x, scale=0.5).value.to_host(), 4)   # row 1 turns by 0.5
array([[1.    , 0.    ],
       [0.8776, 0.4794]], dtype=float32)
"""

import math
import numbers
import threading

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.device import state_of
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import I32, Tensor
from netcl_lite.core.validate import min_ndim

I32_MAX = I32.max  # positions are int32 in the kernel


_tables_lock = threading.Lock()
TABLES_KEPT = 32   # per queue: a training loop asks for the same few;
                   # decoding, a new one per token, asked for by every
                   # layer's q and k


def rope_table(queue, S, pairs, base, offset, scale=1.0):
    """(cos, sin) of scale * (offset + s) * theta_i, every s, i -> (S, pairs, 2).

    Computed once and kept (the last TABLES_KEPT are): every layer, and q
    and k within one, turn by the same angles.
    """
    key = (S, pairs, base, offset, scale)
    with _tables_lock:   # kept in the queue's state: they go with the queue
        tables = tables_of(queue)
        table = tables.pop(key, None)
        if table is None:
            table = _rope_table(queue, S, pairs, base, offset, scale)
        tables[key] = table             # the most recently used goes last
        while len(tables) > TABLES_KEPT:
            del tables[next(iter(tables))]
    return table


def tables_of(queue):
    """The angle tables kept for ``queue``: {(S, pairs, base, offset,
    scale): table}, oldest first."""
    return state_of(queue).kept.setdefault("rope tables", {})


def _rope_table(queue, S, pairs, base, offset, scale):
    base_hi = float(np.float32(base))
    base_lo = float(np.float32(base - base_hi))  # the part float32 drops
    table = Tensor.empty(queue, (S, pairs, 2))
    launch(queue, "rope", "rope_table", (S * pairs,), LOCAL_1D,
           table, S, pairs, offset, base_hi, base_lo, scale)
    return table


def _check(x, base, offset, scale=1.0):
    min_ndim(x, 2, "rope", "x (..., S, d)")
    S, d = x.shape[-2:]
    if d % 2:
        raise ValueError(f"rope: the last dim d={d} must be even (it holds pairs)")
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise ValueError(f"rope: offset must be an int, got {offset!r}")
    if offset < 0 or offset + S > I32_MAX:
        raise ValueError(
            f"rope: positions offset={offset} .. offset+S-1={offset + S - 1} "
            f"must lie in [0, {I32_MAX}]"
        )
    if not (isinstance(base, numbers.Real) and math.isfinite(base) and base > 0):
        raise ValueError(f"rope: base must be a positive number, got {base!r}")
    if isinstance(scale, bool) or not (isinstance(scale, numbers.Real) and
                                       math.isfinite(scale) and scale >= 0):
        raise ValueError(f"rope: scale must be a number >= 0, got {scale!r}")


def rope(x, base=10000.0, offset=0, scale=1.0):
    """Rotate the interleaved pairs of x (..., S, d) by their (scaled) position."""
    (x,) = nodes(x, op="rope")
    _check(x, base, offset, scale)
    queue = x.queue
    S, d = x.shape[-2:]
    pairs = d // 2
    rows = x.value.size // d if d else 0        # every (..., s) row
    table = rope_table(queue, S, pairs, float(base), int(offset),
                       float(scale))                   # (S, d/2, 2)
    out = Tensor.empty(queue, x.shape)
    launch(queue, "rope", "rope_forward", (rows,), LOCAL_1D,
           x.value, table, out, rows, S, pairs)

    def backward(g):
        return (rope_backward(g, table, rows, S, pairs),)

    return record(out, (x,), backward, "rope")


def rope_backward(g, table, rows, S, pairs):
    """grad_x: grad_out turned back by -m * theta_i (a rotation's inverse)."""
    gx = Tensor.empty(g.queue, g.shape)
    launch(g.queue, "rope", "rope_backward", (rows,), LOCAL_1D,
           g, table, gx, rows, S, pairs)
    return gx
