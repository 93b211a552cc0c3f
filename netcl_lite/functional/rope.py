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

import threading

import numpy as np

from netcl_lite.autograd import nodes, record
from netcl_lite.core.device import device_of
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import I32, Tensor
from netcl_lite.core.validate import check_int, check_number, min_ndim
from netcl_lite.core.work import FLOAT, counts

I32_MAX = I32.max  # positions are int32 in the kernel


_tables_lock = threading.Lock()
TABLES_KEPT = 32   # per device: a training loop asks for the same few;
                   # decoding, a new one per token, asked for by every
                   # layer's q and k


def rope_table(device, S, pairs, base, offset, scale=1.0):
    """(cos, sin) of scale * (offset + s) * theta_i, every s, i -> (S, pairs, 2).

    Computed once and kept (the last TABLES_KEPT are): every layer, and q
    and k within one, turn by the same angles.
    """
    key = (S, pairs, base, offset, scale)
    with _tables_lock:   # kept by the Device: they go with it
        tables = tables_of(device)
        table = tables.pop(key, None)
        if table is None:
            table = _rope_table(device, S, pairs, base, offset, scale)
        tables[key] = table             # the most recently used goes last
        while len(tables) > TABLES_KEPT:
            del tables[next(iter(tables))]
    return table


def tables_of(device):
    """The angle tables kept for a device (a Device or a queue): {(S,
    pairs, base, offset, scale): table}, oldest first."""
    return device_of(device).kept.setdefault("rope tables", {})


def _rope_table(device, S, pairs, base, offset, scale):
    base_hi = float(np.float32(base))
    base_lo = float(np.float32(base - base_hi))  # the part float32 drops
    table = Tensor.empty(device, (S, pairs, 2))
    launch(device, "rope", "rope_table", (S * pairs,), LOCAL_1D,
           table, S, pairs, offset, base_hi, base_lo, scale)
    return table


@counts("rope_table")
def _table_work(a):
    # per pair and position: the angle (2 mul), its cos and sin; (S, pairs, 2)
    return 4 * a["S"] * a["pairs"], 2 * FLOAT * a["S"] * a["pairs"]


def _check(x, base, offset, scale=1.0):
    min_ndim(x, 2, "rope", "x (..., S, d)")
    S, d = x.shape[-2:]
    if d % 2:
        raise ValueError(f"rope: the last dim d={d} must be even (it holds pairs)")
    check_int(offset, "rope", "offset")
    if offset < 0 or offset + S > I32_MAX:
        raise ValueError(
            f"rope: positions offset={offset} .. offset+S-1={offset + S - 1} "
            f"must lie in [0, {I32_MAX}]"
        )
    check_number(base, "rope", "base", 0, low_open=True)
    check_number(scale, "rope", "scale", 0)


def rope(x, base=10000.0, offset=0, scale=1.0):
    """Rotate the interleaved pairs of x (..., S, d) by their (scaled) position."""
    (x,) = nodes(x, op="rope")
    _check(x, base, offset, scale)
    device = x.device
    S, d = x.shape[-2:]
    pairs = d // 2
    rows = x.value.size // d if d else 0        # every (..., s) row
    table = rope_table(device, S, pairs, float(base), int(offset),
                       float(scale))                   # (S, d/2, 2)
    out = Tensor.empty(device, x.shape)
    launch(device, "rope", "rope_forward", (rows,), LOCAL_1D,
           x.value, table, out, rows, S, pairs)

    def backward(g):
        return (rope_backward(g, table, rows, S, pairs),)

    return record(out, (x,), backward, "rope")


def rope_backward(g, table, rows, S, pairs):
    """grad_x: grad_out turned back by -m * theta_i (a rotation's inverse)."""
    gx = Tensor.empty(g.device, g.shape)
    launch(g.device, "rope", "rope_backward", (rows,), LOCAL_1D,
           g, table, gx, rows, S, pairs)
    return gx


@counts("rope_forward", "rope_backward")
def _rope_work(a):
    # a pair (x0, x1) turned by (cos, sin): 4 mul + 2 add; table (S, pairs, 2)
    return (6 * a["rows"] * a["pairs"],
            FLOAT * 2 * a["pairs"] * (2 * a["rows"] + a["S"]))
