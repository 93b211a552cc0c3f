"""Input validation shared by every op. The checks run before any kernel,
so a bad call raises a ValueError that names the offending values and
changes nothing.

They read only shapes, dtypes and devices, so they accept Tensors and
autograd nodes alike (both have ``.shape``, ``.dtype``, ``.device`` and
``.queue``).

>>> import numpy as np
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> ids = Tensor.from_host(queue, np.array([0, 3, 7]))
>>> check_ids(ids, 5, "embedding")
Traceback (most recent call last):
...
ValueError: embedding: id 7 at flat position 2 is outside [0, V) with V=5

Numbers that configure an op or a module (a head count, an offset, a
scale) go through ``check_int`` and ``check_number``: one rule for every
one of them, and the same words in every error.

>>> check_int(True, "MultiHeadAttention", "n_heads", low=1)
Traceback (most recent call last):
...
ValueError: MultiHeadAttention: n_heads must be a positive integer, got True
"""

import math
import numbers

import numpy as np

from netcl_lite.core.device import context_of
from netcl_lite.core.tensor import FLOAT


def _fail(op, name, what, value):
    where = f"{op}: " if op else ""
    raise ValueError(f"{where}{name} must be {what}, got {value!r}")


def _int_words(low, high):
    """How an error names the ints wanted: "a positive integer", "an int
    >= 0", "an int in [0, 9]"."""
    if high is not None:
        return f"an int in [{low}, {high}]" if low is not None else \
            f"an int <= {high}"
    if low == 1:
        return "a positive integer"
    return "an int" if low is None else f"an int >= {low}"


def check_int(value, op, name, low=None, high=None, what=None):
    """``value`` as an int, else a ValueError naming ``op``, ``name`` and
    the value. An int is a Python or numpy integer and never a bool
    (Python counts True as 1, but ``n_heads=True`` is a mistake); ``low``
    and ``high`` bound it, both included. ``what`` replaces the words for
    what is wanted ("None or a positive int").

    >>> check_int(np.int64(4), "repeat_kv", "n_rep", low=1)
    4
    >>> check_int(2.0, "rope", "offset")
    Traceback (most recent call last):
    ...
    ValueError: rope: offset must be an int, got 2.0
    """
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) \
            or (low is not None and value < low) \
            or (high is not None and value > high):
        _fail(op, name, what or _int_words(low, high), value)
    return int(value)


def _number_words(low, high, low_open):
    if low is None:
        return "a finite number" if high is None else f"a number < {high}"
    if high is not None:
        return f"a number in {'(' if low_open else '['}{low}, {high})"
    if low_open:
        return "a positive number" if low == 0 else f"a number > {low}"
    return f"a number >= {low}"


def check_number(value, op, name, low=None, high=None, low_open=False,
                 what=None):
    """``value`` as a float, else a ValueError naming ``op``, ``name`` and
    the value: a finite real number (a bool is not one), at least ``low``
    (more than ``low`` with ``low_open``) and below ``high``.

    >>> check_number(0.9, "AdamW", "beta1", 0.0, 1.0)
    0.9
    >>> check_number(0, "clip_grad_norm", "max_norm", 0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: clip_grad_norm: max_norm must be a positive number, got 0
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high
    if not ok:
        _fail(op, name, what or _number_words(low, high, low_open), value)
    return float(value)


def check_tensors(tensors, dtype=FLOAT, op="op"):
    """Every Tensor was made on the first one's device (its command queue)
    and has ``dtype`` (``dtype=None``: any dtype).

    One queue per op, even for queues of one context: an input from another
    queue is a ValueError naming both queues. The op does not synchronise
    the two instead, because the buffer pool (``core/pool.py``) could not
    make that safe: a buffer that goes back to one device's pool is reused
    by that device's next op at once, which is safe only because its queue
    runs in order; a kernel queued on the other queue may still be reading
    it. Copy the values over (``to_host`` and ``from_host``) to move a
    Tensor to another queue. (Two Devices of one queue, two pyopencl
    objects for it, are one queue.)
    """
    device = tensors[0].device
    for i, t in enumerate(tensors):
        if t.device is not device:
            same_queue(t, device.queue, op, f"input {i}", "input 0")
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
