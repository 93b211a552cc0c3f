"""Reuse device buffers instead of asking the driver for new ones.

Every op writes a fresh output Tensor. A training step of chapter 09's
model creates a few hundred buffers, 20-30 MB in all, and frees them again.
On a CPU device each new buffer is fresh memory from the operating system:
the first kernel that writes it stops at every 4 KB page for the kernel to
map and zero it (about 5,000 page faults per step, measured with
``getrusage``). A buffer used a moment ago is mapped already, and often
still sits in the cache.

So each ``Device`` owns a pool: pyopencl's ``MemoryPool``. It keeps the
buffers that come back, by size, and hands one out again for a request of
the same size. (Its bins could round a request up by as much as a
sixteenth, so that near sizes share buffers; ``EXACT_BITS`` keeps every
size below 128 MiB exact instead, as before: a Tensor's ``buffer.size`` is
its bytes, which chapter 08 shows.) ``Tensor.empty`` takes its buffer from
``device.allocate(nbytes)``: a ``PooledBuffer``, whose memory goes back to
the pool when that Python object is collected. A view (``Tensor.reshape``)
shares the buffer object, so the memory comes back once the Tensor and
every view of it are gone; whoever keeps the ``.buffer`` keeps the memory
too.

Why reuse is safe while kernels are still queued: every op of a queue runs
in order (an in-order queue), so a kernel enqueued later, writing the
reused buffer, starts only after every earlier kernel that read it has
finished. Buffers are therefore pooled per Device (one queue), only for
in-order queues, and an op takes all its inputs from one Device
(``validate.py``).

The pool keeps idle buffers for as long as it may need them again. When
they add up to more than ``KEEP_BYTES``, the next allocation first lets
all of them go (a run that moves from one set of shapes to another does not
keep the old set), and ``Device.release_idle()`` does so on demand.
``NETCL_POOL=0`` turns pooling off: every Tensor gets a new ``cl.Buffer``.

This module used to be a pool of its own: exact sizes, a weak reference
per Tensor calling the pool back, a search through the lent buffers to find
the owner of one. pyopencl's does that work in C++. Measured against it on
chapter 09's training step (both versions in one process, interleaved, a
shared 2-core machine): the same memory (134.2 MiB in the pool after a
step, 118.3 of it in use: the optimizer's moments, the gradients), the
same page faults (1 to 6 a step), a
``Tensor.empty`` in 1.65 us instead of 2.37, and the step's CPU time the
same within the machine's noise (5%).

>>> from netcl_lite.core.device import manager
>>> from netcl_lite.core.tensor import Tensor
>>> dev = manager.default("cpu")
>>> a = Tensor.empty(dev, (1000,))
>>> b = Tensor.empty(dev, (1000,))      # a holds its buffer: another one
>>> a.buffer.int_ptr == b.buffer.int_ptr
False
>>> ptr = a.buffer.int_ptr
>>> del a                               # a's buffer goes back to the pool
>>> Tensor.empty(dev, (1000,)).buffer.int_ptr == ptr
True
"""

import os

import pyopencl as cl
import pyopencl.tools as cl_tools

KEEP_BYTES = 256 << 20     # idle bytes a pool may hold before it lets go
# Significant bits of a size that name its bin: 26 keeps sizes below 2^27
# bytes exact, and above that rounds up by at most 2^-26 of the size (with
# 6 bits for the exponent, the most that a 32-bit bin number holds)
EXACT_BITS = 26


def enabled():
    """False when ``NETCL_POOL=0``: no pooling in this process."""
    return os.environ.get("NETCL_POOL", "1") != "0"


def allocator(device):
    """(allocate, pool) for a Device: ``allocate(nbytes)`` gives a
    READ_WRITE buffer of at least ``nbytes``; ``pool`` is the
    ``MemoryPool`` it takes them from, or None when the device's queue runs
    out of order or ``NETCL_POOL=0`` (then each buffer is new, and freed
    when its last holder goes)."""
    if not (device.in_order and enabled()):
        context, flags = device.context, cl.mem_flags.READ_WRITE

        def allocate(nbytes):
            return cl.Buffer(context, flags, nbytes)
        return allocate, None
    # ImmediateAllocator: the driver reports a failed allocation at once,
    # which is what lets the pool free its idle buffers and try again
    pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(device.queue),
                               leading_bits_in_bin_id=EXACT_BITS)
    take = pool.allocate

    def allocate(nbytes):
        if pool.managed_bytes - pool.active_bytes > KEEP_BYTES:
            pool.free_held()
        return take(nbytes)
    return allocate, pool
