"""A Device, and everything it keeps, goes when nothing holds it
(core/device.py).

A Device keeps the kernels built for its context, its matmul tile, its
pool of buffers and RoPE's angle tables. A queue you make yourself gets a
Device on first use, which it holds (an attribute) and which holds it: the
pair goes together once nothing else holds either. No module-level table
keyed by a queue's address keeps any of them alive.

pyopencl's CommandQueue takes no weak references, so the tests watch a
subclass of it, and the Devices (Python objects). Each test drops 50 and
counts how many are freed: all 50.
"""

import gc
import threading
import weakref

import numpy as np
import pyopencl as cl

import netcl_lite.functional as F
from netcl_lite.core.device import Device, device_of, manager
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.matmul import FAST_MIN_MNK
from netcl_lite.functional.rope import tables_of

N = 50


class WatchedQueue(cl.CommandQueue):
    """A pyopencl CommandQueue that a weakref can watch."""


def work(where):
    """Ops that make a device keep everything it can: the tiled matmul (a
    tile choice, kernels built with its options), pooled buffers and a RoPE
    angle table. ``where``: a queue or a Device."""
    assert 64 ** 3 >= FAST_MIN_MNK                  # so matmul_tiled runs
    a = Tensor.from_host(where, np.ones((64, 64), np.float32))
    with trace() as ran:
        out = F.add(F.matmul(a, a), a)               # outputs from the pool
        F.rope(a, offset=5)                          # a kept angle table
    assert "matmul.cl:matmul_tiled" in ran and tables_of(where)
    np.testing.assert_array_equal(out.value.to_host(), 65.0)
    device = device_of(where)
    assert device.tile is not None and device.programs
    assert device.pool.active_blocks or device.pool.held_blocks


def freed(refs):
    """How many of the weakly watched objects are gone."""
    gc.collect()
    return sum(ref() is None for ref in refs)


def test_dropped_queues_of_one_context_are_freed():
    """50 queues of the device's context, each used, then dropped: the
    context and its kernels stay (the device holds them), so anything they
    kept of a queue would keep it alive here."""
    dev = manager.default("auto")
    queues = [WatchedQueue(dev.context) for _ in range(N)]
    for queue in queues:
        work(queue)
    assert all(device_of(q).programs is dev.programs for q in queues)
    watched = [weakref.ref(q) for q in queues]
    devices = [weakref.ref(device_of(q)) for q in queues]
    del queues, queue
    assert freed(watched) == N and freed(devices) == N


def test_dropped_devices_are_freed_with_their_contexts():
    """50 Devices, each of its own context (``Device.open``), used (one
    kernel file built, pooled buffers, a kept table), then dropped: every
    one is freed, with its queue."""
    cl_device = manager.default("auto").cl_device
    devices = []
    for _ in range(N):
        dev = Device.open(cl_device)
        x = F.scale(Tensor.from_host(dev, np.ones(4)), 2.0).value
        np.testing.assert_array_equal(x.to_host(), 2.0)
        dev.kept["a table"] = x
        devices.append(weakref.ref(dev))
    del dev, x
    assert freed(devices) == N


def test_a_queue_holds_its_own_context_and_both_go_together():
    """Queues each of their own context, which the test drops once the
    queue's Device exists: Intel's runtime frees a context that only a
    queue holds (core/device.py: context_of), so the queue keeps working
    only because its Device holds the context. When the queue goes, its
    Device (and the context's kernels) go too."""
    cl_device = manager.default("auto").cl_device
    watched, devices = [], []
    for _ in range(N):
        context = cl.Context([cl_device])
        queue = WatchedQueue(context)
        work(queue)                       # the queue's Device is made here
        del context                       # only the Device holds it now
        gc.collect()
        work(queue)
        watched.append(weakref.ref(queue))
        devices.append(weakref.ref(device_of(queue)))
    del queue
    assert freed(watched) == N and freed(devices) == N


def test_a_plain_pyopencl_queue_takes_its_device_with_it():
    dev = manager.default("auto")
    devices = []
    for _ in range(N):
        queue = cl.CommandQueue(dev.context)
        work(queue)
        devices.append(weakref.ref(device_of(queue)))
    del queue
    assert freed(devices) == N


def test_a_tensor_keeps_its_device_and_queue():
    """A Tensor holds its Device, which holds the queue: a Tensor made on a
    queue nobody else holds stays usable, and the Device goes with it."""
    dev = manager.default("auto")
    t = Tensor.from_host(cl.CommandQueue(dev.context), np.arange(4.0))
    gc.collect()
    device = weakref.ref(t.device)
    np.testing.assert_array_equal(F.scale(t, 2.0).value.to_host(),
                                  [0, 2, 4, 6])
    assert device_of(t.queue) is t.device
    del t
    assert freed([device]) == 1


def test_the_manager_device_is_its_queues_device():
    dev = manager.default("auto")
    assert device_of(dev.queue) is dev and device_of(dev) is dev
    assert Tensor.from_host(dev.queue, np.ones(2)).device is dev
    assert Tensor.empty(dev, (2,)).queue is dev.queue
    other = cl.CommandQueue(dev.context)
    assert device_of(other) is not dev
    assert device_of(other).programs is dev.programs      # built once


def test_two_threads_get_one_device_for_one_queue():
    queue = cl.CommandQueue(manager.default("auto").context)
    found, start = [], threading.Barrier(4)

    def ask():
        start.wait()
        found.append(device_of(queue))
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(d) for d in found}) == 1


def test_two_pyopencl_objects_of_one_queue_make_one_queue_for_an_op():
    dev = manager.default("auto")
    same = cl.CommandQueue.from_int_ptr(dev.queue.int_ptr)
    a = Tensor.from_host(dev.queue, np.ones(3))
    b = Tensor.from_host(same, np.ones(3))
    np.testing.assert_array_equal(F.add(a, b).value.to_host(), 2.0)
