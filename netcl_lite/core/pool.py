"""Reuse device buffers instead of asking the driver for new ones.

Every op writes a fresh output Tensor. A training step of chapter 09's
model creates a few hundred buffers, 20-30 MB in all, and frees them again.
On a CPU device each new buffer is fresh memory from the operating system:
the first kernel that writes it stops at every 4 KB page for the kernel to
map and zero it (about 5,000 page faults per step, measured with
``getrusage``). A buffer used a moment ago is mapped already, and often
still sits in the cache.

So each queue owns a pool (in its state, ``core/device.py: state_of``): a
free list of idle buffers per size. ``Tensor.empty`` takes a buffer of
exactly the size asked for from the list, when there is one, and the Tensor
owns it: when the Tensor is collected, a weak reference to it calls the
pool back, which puts the buffer on its list again (what
``weakref.finalize`` does, at a fifth of its cost: every op makes a
Tensor). A view (``Tensor.reshape``) holds the Tensor it views, so a buffer
comes back only once its Tensor and every view of it are gone. Nothing is
read from reference counts; the one rule is that whoever keeps a buffer
keeps its Tensor (or a view), not the bare ``.buffer``.

Why reuse is safe while kernels are still queued: every op of a queue runs
in order (an in-order queue), so a kernel enqueued later, writing the
reused buffer, starts only after every earlier kernel that read it has
finished. Buffers are therefore pooled per queue, only for in-order
queues, and an op takes all its inputs from one queue (``validate.py``).

The pool keeps at most ``KEEP_BYTES`` of idle buffers per queue; a buffer
that comes back beyond that is let go, and ``release_idle()`` lets every
idle one go. ``NETCL_POOL=0`` turns pooling off.

>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> queue = manager.default("cpu").queue
>>> a = Tensor.empty(queue, (1000,))
>>> b = Tensor.empty(queue, (1000,))    # a holds its buffer: another one
>>> a.buffer.int_ptr == b.buffer.int_ptr
False
>>> ptr = a.buffer.int_ptr
>>> del a                               # a's buffer goes back to the pool
>>> Tensor.empty(queue, (1000,)).buffer.int_ptr == ptr
True
"""

import os
import threading
import weakref

import pyopencl as cl

from netcl_lite.core.device import state_of

KEEP_BYTES = 256 << 20     # idle bytes kept per queue, at most
_ENABLED = os.environ.get("NETCL_POOL", "1") != "0"
_pools = weakref.WeakSet()  # every live Pool, for release_idle (not kept alive)
_lock = threading.Lock()    # one pool per queue, even from two threads


class Pool:
    """The free lists of one in-order queue: no reference to the queue
    (its state holds the pool), only to its context, to make buffers."""

    def __init__(self, context):
        self.context = context
        self.free = {}            # nbytes -> [idle cl.Buffer, ...]
        self.idle_bytes = 0       # bytes of every buffer in self.free
        self.keep = KEEP_BYTES
        # weakref.ref(owner, self._give_back) -> (buffer, nbytes), for every
        # buffer handed out and not back; the table keeps each weak
        # reference alive until it calls back
        self.lent = {}
        # A call back comes whenever an owner goes, in whichever thread
        # drops it, even in the middle of take: re-entrant, and nothing that
        # could drop a Tensor happens while it is held.
        self.lock = threading.RLock()

    def take(self, owner, nbytes):
        """An idle buffer of ``nbytes``, else a new one; it comes back when
        ``owner`` (a Tensor) is collected."""
        buffer = None
        with self.lock:
            listed = self.free.get(nbytes)
            if listed:
                buffer = listed.pop()        # the last to come back: warm
                self.idle_bytes -= nbytes
        if buffer is None:
            buffer = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, nbytes)
        self.lent[weakref.ref(owner, self._give_back)] = (buffer, nbytes)
        return buffer

    def _give_back(self, ref):
        """An owner is gone: list its buffer as idle, unless the pool holds
        ``keep`` idle bytes already (then the buffer is freed)."""
        with self.lock:
            buffer, nbytes = self.lent.pop(ref)
            if self.idle_bytes + nbytes <= self.keep:
                listed = self.free.get(nbytes)
                if listed is None:           # a new list only for a new size
                    listed = self.free[nbytes] = []
                listed.append(buffer)
                self.idle_bytes += nbytes

    def owner(self, buffer):
        """The Tensor that holds ``buffer``, if this pool lent it, else None
        (a slow search: only ``Tensor(queue, buffer, ...)`` asks)."""
        while True:
            try:
                lent = list(self.lent.items())
                break
            except RuntimeError:    # an owner went meanwhile: look again
                continue
        ptr = buffer.int_ptr
        for ref, (mine, _) in lent:
            if mine is buffer or mine.int_ptr == ptr:
                return ref()
        return None

    def trim(self):
        """Let go of every idle buffer."""
        with self.lock:
            self.free, self.idle_bytes = {}, 0


class Unpooled:
    """Out-of-order queues and ``NETCL_POOL=0``: a new buffer every time
    (freed by pyopencl when its last reference goes)."""

    def __init__(self, context):
        self.context = context

    def take(self, owner, nbytes):
        return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, nbytes)


def pool_of(queue):
    """The queue's ``Pool`` (or ``Unpooled``), made on first use."""
    state = state_of(queue)
    if state.pool is None:
        with _lock:
            if state.pool is None:
                if _ENABLED and state.in_order:
                    state.pool = Pool(state.context)
                    _pools.add(state.pool)
                else:
                    state.pool = Unpooled(state.context)
    return state.pool


def take(queue, nbytes, owner):
    """A READ_WRITE cl.Buffer of ``nbytes`` for ``queue``, owned by
    ``owner`` (a Tensor): an idle one of the same size from the queue's
    pool, else a new one, which goes back to the pool when ``owner`` is
    collected."""
    try:
        pool = queue._netcl_lite.pool       # the queue's state (state_of)
    except AttributeError:
        pool = None
    if pool is None:
        pool = pool_of(queue)
    return pool.take(owner, nbytes)


def owner_of(buffer):
    """The Tensor that owns a pooled ``buffer`` handed out and not yet
    back, else None (``Tensor(queue, buffer, ...)`` keeps it, as a view
    does)."""
    for pool in list(_pools):
        found = pool.owner(buffer)
        if found is not None:
            return found
    return None


def release_idle():
    """Free every idle buffer of every pool now (e.g. before a big model)."""
    for pool in list(_pools):
        pool.trim()
