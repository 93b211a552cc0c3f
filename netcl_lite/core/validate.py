"""Input validation shared by every op. The checks run before any kernel,
so a bad call raises a ValueError that names the offending values and
changes nothing.

They read only shapes, dtypes and queues, so they accept Tensors and
autograd nodes alike (both have ``.shape``, ``.dtype`` and ``.queue``).

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> ids = Tensor.from_host(queue, np.array([0, 3, 7]))
>>> check_ids(ids, 5, "embedding")
Traceback (most recent call last):
...
ValueError: embedding: id 7 at flat position 2 is outside [0, V) with V=5
"""

import math

import numpy as np

from netcl_lite.core.device import context_of
from netcl_lite.core.tensor import FLOAT


def check_tensors(tensors, dtype=FLOAT, op="op"):
    """Every Tensor was made on the first one's command queue and has
    ``dtype`` (``dtype=None``: any dtype).

    One queue per op, even for queues of one context: an input from another
    queue is a ValueError naming both queues. The op does not synchronise
    the two instead, because the buffer pool (``core/pool.py``) could not
    make that safe: a buffer that goes back to one queue's pool is reused by
    that queue's next op at once, which is safe only because that queue
    runs in order; a kernel queued on the other queue may still be reading
    it. Copy the values over (``to_host`` and ``from_host``) to move a
    Tensor to another queue.
    """
    queue = tensors[0].queue
    for i, t in enumerate(tensors):
        if t.queue is not queue:
            same_queue(t, queue, op, f"input {i}", "input 0")
        if dtype is not None and t.dtype is not dtype and t.dtype != dtype:
            raise ValueError(f"{op}: input {i} has dtype {t.dtype}, need {dtype}")


def queue_name(queue):
    """A command queue as an error names it: its handle and its device."""
    return f"the CommandQueue {queue.int_ptr:#x} on {queue.device.name.strip()!r}"


def same_queue(x, queue, op, what, other):
    """A ValueError naming both queues unless Tensor ``x`` (``what``) was
    made on ``queue`` (that of ``other``). Two pyopencl objects for one
    queue are one queue."""
    if x.queue is queue or x.queue == queue:
        return
    mine, theirs = queue_name(x.queue), queue_name(queue)
    if context_of(x.queue) != context_of(queue):
        raise ValueError(
            f"{op}: {what} lives in another OpenCL context ({mine}) than "
            f"{other} ({theirs}); create every tensor with the same "
            "device's queue")
    raise ValueError(
        f"{op}: {what} was made on {mine}, {other} on {theirs}: an op takes "
        "all its tensors from one queue (the buffer pool reuses a buffer as "
        "soon as its Tensor is gone, which only one in-order queue makes "
        "safe); copy the values over with to_host and from_host")


def same_shape(a, b, op):
    if a.shape != b.shape:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} differ")


def min_ndim(x, n, op, what="input"):
    if len(x.shape) < n:
        raise ValueError(f"{op}: {what} needs at least {n} dims, got shape {x.shape}")


def check_ids(ids, V, op, what="id"):
    """Every id of a Tensor lies in [0, V), else a ValueError naming the
    first bad one.

    A kernel must never index out of bounds, so the ids are looked at on
    the host: the copy kept by ``Tensor.from_host``, else read back.
    """
    host = ids.host_ids()
    host = (ids.to_host() if host is None else host).ravel()
    bad = (host < 0) | (host >= V)
    if bad.any():
        pos = int(np.argmax(bad))
        raise ValueError(
            f"{op}: {what} {int(host[pos])} at flat position {pos} is outside "
            f"[0, V) with V={V}"
        )


def check_qkv(op, q, k, v=None, gqa=True):
    """The one validator of attention inputs: (batch, H, HKV), or a
    ValueError naming the shapes.

    q (..., H, Sq, d), k (..., HKV, Sk, d), v (..., HKV, Sk, dv), float32.
    Equal leading dims give H = HKV = 1 over batch = their product (plain
    attention). # GQA (``gqa=True``): q may have H = n * HKV heads; kv head
    ``b * HKV + h // (H // HKV)`` then serves query head ``b * H + h``.
    """
    named = (("q", q), ("k", k)) + ((("v", v),) if v is not None else ())
    for name, x in named:
        if x.dtype != FLOAT:
            raise ValueError(f"{op}: {name} {x.shape} has dtype {x.dtype}, "
                             "need float32")
        if len(x.shape) < 2:
            raise ValueError(f"{op}: {name} must be (..., S, d), got shape "
                             f"{x.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{op}: head dims differ: q {q.shape} "
                         f"(d={q.shape[-1]}) vs k {k.shape} (d={k.shape[-1]})")
    if q.shape[-1] == 0:
        raise ValueError(f"{op}: head dim d=0 in q {q.shape}")
    if v is not None:
        if v.shape[:-2] != k.shape[:-2]:
            raise ValueError(f"{op}: leading dims differ: k {k.shape} vs "
                             f"v {v.shape}")
        if v.shape[-2] != k.shape[-2]:
            raise ValueError(f"{op}: k {k.shape} and v {v.shape}: lengths "
                             f"differ, Sk={k.shape[-2]} vs Sk={v.shape[-2]}")
    if q.shape[:-2] == k.shape[:-2]:
        return math.prod(q.shape[:-2]), 1, 1
    if not gqa:
        raise ValueError(f"{op}: leading dims differ: q {q.shape} vs "
                         f"k {k.shape}")
    if len(q.shape) < 3 or len(q.shape) != len(k.shape) \
            or q.shape[:-3] != k.shape[:-3]:
        raise ValueError(f"{op}: leading dims differ: q {q.shape} vs k "
                         f"{k.shape} (GQA needs (..., H, S, d) and "
                         "(..., HKV, S, d))")
    H, HKV = q.shape[-3], k.shape[-3]
    if HKV == 0 or H % HKV:
        raise ValueError(f"{op}: query heads H={H} are not a multiple of kv "
                         f"heads HKV={HKV} (q {q.shape}, k {k.shape})")
    return math.prod(q.shape[:-3]), H, HKV
