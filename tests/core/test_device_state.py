"""What a queue keeps (core/device.py: state_of) goes when the queue goes.

The kernels built for a context, the matmul tile chosen for a queue and
its pool of buffers used to sit in module-level dicts keyed by the queue's
address, each entry holding the queue so that the address stayed its own:
every queue ever used stayed alive. Now they live in the queue's state,
which the queue holds and which holds no queue.

pyopencl's CommandQueue takes no weak references, so the tests watch a
subclass of it, and the states (a state lives exactly as long as its
queue: the queue holds it, nothing else does).
"""

import gc
import weakref

import numpy as np
import pyopencl as cl

import netcl_lite.functional as F
from netcl_lite.core import pool, tune
from netcl_lite.core.device import manager, state_of
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.matmul import FAST_MIN_MNK
from netcl_lite.functional.rope import tables_of

QUEUES = 50


class WatchedQueue(cl.CommandQueue):
    """A pyopencl CommandQueue that a weakref can watch."""


def work(queue):
    """Ops that make the queue keep everything it can: the tiled matmul (a
    tile choice, kernels built with its options), pooled buffers and a RoPE
    angle table."""
    assert 64 ** 3 >= FAST_MIN_MNK                  # so matmul_tiled runs
    a = Tensor.from_host(queue, np.ones((64, 64), np.float32))
    with trace() as ran:
        out = F.add(F.matmul(a, a), a)               # outputs from the pool
        F.rope(a, offset=5)                          # a kept angle table
    assert "matmul.cl:matmul_tiled" in ran and tables_of(queue)
    np.testing.assert_array_equal(out.value.to_host(), 65.0)
    state = state_of(queue)
    assert state.launches and state in tune._by_queue
    assert isinstance(state.pool, pool.Pool) and state.pool.lent


def alive(refs):
    gc.collect()
    return sum(ref() is not None for ref in refs)


def test_dropped_queues_of_one_context_are_freed():
    """50 queues of the device's context, each used, then dropped: the
    context and its kernels stay (the device holds them), so anything they
    kept of a queue would keep it alive here."""
    dev = manager.default("auto")
    queues = [WatchedQueue(dev.context) for _ in range(QUEUES)]
    for queue in queues:
        work(queue)
    assert all(state_of(q).kernels is dev.state.kernels for q in queues)
    watched = [weakref.ref(q) for q in queues]
    states = [weakref.ref(state_of(q)) for q in queues]
    pools = [weakref.ref(state_of(q).pool) for q in queues]
    del queues, queue
    assert alive(watched) <= 1
    assert alive(states) <= 1 and alive(pools) <= 1


def test_a_queue_holds_its_own_context_and_both_go_together():
    """Queues each of their own context, held by the test only through the
    queue's state: Intel's runtime frees a context that only a queue holds
    (core/device.py: context_of), so the queue keeps working only if its
    state holds the context; when the queue goes, the context's state (its
    kernels) goes too."""
    device = manager.default("auto").cl_device
    watched, contexts = [], []
    for _ in range(QUEUES):
        context = cl.Context([device])
        queue = WatchedQueue(context)
        work(queue)                       # the queue's state is made here
        del context                       # only the queue's state holds it
        gc.collect()
        work(queue)
        watched.append(weakref.ref(queue))
        contexts.append(weakref.ref(state_of(queue).shared))
    del queue
    assert alive(watched) <= 1
    assert alive(contexts) <= 1


def test_a_plain_pyopencl_queue_takes_its_state_with_it():
    dev = manager.default("auto")
    states = []
    for _ in range(5):
        queue = cl.CommandQueue(dev.context)
        work(queue)
        states.append(weakref.ref(state_of(queue)))
    del queue
    assert alive(states) <= 1


def test_the_device_owns_its_queues_state():
    dev = manager.default("auto")
    assert state_of(dev.queue) is dev.state
    assert dev.state.context is dev.context
    other = cl.CommandQueue(dev.context)
    assert state_of(other) is not dev.state
    assert state_of(other).kernels is dev.state.kernels   # built once


def test_two_pyopencl_objects_of_one_queue_make_one_queue_for_an_op():
    dev = manager.default("auto")
    same = cl.CommandQueue.from_int_ptr(dev.queue.int_ptr)
    a = Tensor.from_host(dev.queue, np.ones(3))
    b = Tensor.from_host(same, np.ones(3))
    np.testing.assert_array_equal(F.add(a, b).value.to_host(), 2.0)
