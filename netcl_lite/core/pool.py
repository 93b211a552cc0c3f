"""Reuse device buffers instead of asking the driver for new ones.

Every op writes a fresh output Tensor. A training step of chapter 09's
model creates a few hundred buffers, 20-30 MB in all, and frees them again.
On a CPU device each new buffer is fresh memory from the operating system:
the first kernel that writes it stops at every 4 KB page for the kernel to
map and zero it (about 5,000 page faults per step, measured with
``getrusage``). A buffer used a moment ago is mapped already, and often
still sits in the cache.

So ``take`` hands out a buffer of exactly the size asked for that nobody
uses any more, when there is one. "Nobody uses it" is read from Python's
reference count: the pool's own list holds one reference, and any Tensor
(or view) over the buffer holds another. No free() to call, no way to
hand out a buffer that something still points at.

Why reuse is safe while kernels are still queued: every op of a queue runs
in order (an in-order queue), so a kernel enqueued later, writing the
reused buffer, starts only after every earlier kernel that read it has
finished. Buffers are therefore pooled per queue, and only for in-order
queues.

The pool keeps at most ``KEEP_BYTES`` of idle buffers per queue; beyond
that the idle ones are let go. ``NETCL_POOL=0`` turns pooling off.

>>> from netcl_lite.core.device import manager
>>> queue = manager.default("cpu").queue
>>> a = take(queue, 4096)
>>> b = take(queue, 4096)          # a is in use: another buffer
>>> a.int_ptr == b.int_ptr
False
>>> ptr = a.int_ptr
>>> del a                          # nobody holds a's buffer any more
>>> take(queue, 4096).int_ptr == ptr
True
"""

import os
import sys
import threading

import pyopencl as cl

from netcl_lite.core.device import context_of

KEEP_BYTES = 256 << 20     # idle bytes kept per queue, at most
_ENABLED = os.environ.get("NETCL_POOL", "1") != "0"
_lock = threading.Lock()
_pools = {}                # queue.int_ptr -> _Pool


class _Pool:
    def __init__(self, queue):
        self.queue = queue        # kept alive: its address names this pool
        self.by_size = {}         # nbytes -> [cl.Buffer, ...] handed out
        self.bytes = 0            # bytes of every buffer listed
        self.limit = KEEP_BYTES   # trim when self.bytes passes it
        self.in_order = not (queue.properties &
                             cl.command_queue_properties
                             .OUT_OF_ORDER_EXEC_MODE_ENABLE)

    def take(self, nbytes):
        listed = self.by_size.setdefault(nbytes, [])
        for buffer in listed:
            # 3 = the list + the loop variable + getrefcount's argument
            if sys.getrefcount(buffer) == 3:
                return buffer
        buffer = cl.Buffer(context_of(self.queue), cl.mem_flags.READ_WRITE, nbytes)
        listed.append(buffer)
        self.bytes += nbytes
        if self.bytes > self.limit:
            self.trim()
            # what is in use stays; scan again only after as much again
            self.limit = max(KEEP_BYTES, 2 * self.bytes)
        return buffer

    def trim(self):
        """Let go of every buffer that nobody holds."""
        for nbytes, listed in self.by_size.items():
            # 3 = the list + the loop variable + getrefcount's argument
            listed[:] = [b for b in listed if sys.getrefcount(b) > 3]
        self.by_size = {n: bs for n, bs in self.by_size.items() if bs}
        self.bytes = sum(n * len(bs) for n, bs in self.by_size.items())


def take(queue, nbytes):
    """A READ_WRITE cl.Buffer of ``nbytes`` for ``queue``: an idle one of the
    same size from the pool, else a new one (which the pool then tracks)."""
    if not _ENABLED:
        return cl.Buffer(context_of(queue), cl.mem_flags.READ_WRITE, nbytes)
    with _lock:
        pool = _pools.get(queue.int_ptr)
        if pool is None:
            pool = _pools[queue.int_ptr] = _Pool(queue)
        if not pool.in_order:
            return cl.Buffer(context_of(queue), cl.mem_flags.READ_WRITE, nbytes)
        return pool.take(nbytes)


def release_idle():
    """Free every idle buffer of every pool now (e.g. before a big model)."""
    with _lock:
        for pool in _pools.values():
            pool.trim()
