"""core/pool.py: a buffer goes back to its device's pool when its Tensor,
and every view of it, is collected; never while one of them lives.

The tests write values into pooled Tensors (``Tensor.empty``; ``from_host``
makes its own buffer, outside the pool) and check that taking more buffers
of the same size leaves them alone."""

import os
import subprocess
import sys

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools
import pytest

from netcl_lite.core import pool
from netcl_lite.core.device import device_of, manager
from netcl_lite.core.tensor import Tensor

N = 77   # values per test tensor: a size no other test asks for


def queue():
    return manager.default("cpu").queue


def filled(q, values):
    """A pooled Tensor (Tensor.empty) holding ``values``."""
    values = np.asarray(values, np.float32)
    t = Tensor.empty(q, values.shape)
    cl.enqueue_copy(q, t.buffer, values)
    return t


def overwrite_every_free_buffer(q, shape, times=4):
    """Take ``times`` buffers of this size and write into each, as the next
    ops would: a buffer still held would lose its values."""
    taken = [filled(q, np.full(shape, -1.0)) for _ in range(times)]
    q.finish()
    return taken


def test_an_idle_buffer_is_reused():
    q = queue()
    a = Tensor.empty(q, (123, 7))
    ptr = a.buffer.int_ptr
    del a
    assert Tensor.empty(q, (123, 7)).buffer.int_ptr == ptr


def test_a_buffer_holds_exactly_the_bytes_asked_for():
    """Chapter 08 reads a Tensor's bytes from ``buffer.size``: the pool does
    not round a size up (core/pool.py: EXACT_BITS)."""
    q = queue()
    for shape in [(1,), (1000,), (1025,), (1, 2, 1024, 1024), (3, 5, 7, 11)]:
        t = Tensor.empty(q, shape)
        assert t.buffer.size == 4 * np.prod(shape), shape


def test_a_held_buffer_is_never_handed_out():
    q = queue()
    held = [filled(q, np.arange(N) + k) for k in range(3)]
    taken = overwrite_every_free_buffer(q, (N,))
    ptrs = {t.buffer.int_ptr for t in held}
    assert not ptrs & {t.buffer.int_ptr for t in taken}
    for k, t in enumerate(held):
        np.testing.assert_array_equal(t.to_host(), np.arange(N) + k)


def test_a_view_that_outlives_its_tensor_keeps_the_buffer():
    q = queue()
    a = filled(q, np.arange(N))
    ptr = a.buffer.int_ptr
    view = a.reshape(7, 11).reshape(11, 7)      # a view of a view
    del a                                       # the views alone hold it now
    taken = overwrite_every_free_buffer(q, (N,))
    assert ptr not in {t.buffer.int_ptr for t in taken}
    np.testing.assert_array_equal(view.to_host().ravel(), np.arange(N))
    del taken, view                             # the last holder goes
    assert Tensor.empty(q, (N,)).buffer.int_ptr == ptr


def test_a_tensor_made_over_a_pooled_buffer_keeps_it():
    q = queue()
    a = filled(q, np.arange(N))
    alias = Tensor(q, a.buffer, (7, 11), np.float32)   # by hand, not reshape
    del a
    overwrite_every_free_buffer(q, (N,))
    np.testing.assert_array_equal(alias.to_host().ravel(), np.arange(N))


def test_a_buffer_comes_back_once_per_tensor():
    """Two tensors given back, two different buffers taken: a buffer is
    never on the free list twice."""
    q = queue()
    a, b = Tensor.empty(q, (N, 2)), Tensor.empty(q, (N, 2))
    del a, b
    c, d = Tensor.empty(q, (N, 2)), Tensor.empty(q, (N, 2))
    assert c.buffer.int_ptr != d.buffer.int_ptr


def test_values_survive_many_ops():
    """Reused buffers under a chain of ops: the results stay right."""
    import netcl_lite.functional as F
    q = queue()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 17)).astype(np.float32)
    t, ref = Tensor.from_host(q, x), x
    for _ in range(20):
        t = F.add(t, F.scale(t, 0.5)).value
        ref = ref + 0.5 * ref
    np.testing.assert_allclose(t.to_host(), ref, rtol=1e-6)


def test_out_of_order_queue_gets_fresh_buffers():
    """Reuse is safe only on an in-order queue (core/pool.py): an
    out-of-order queue's Device has no pool, and each Tensor a buffer of
    its own."""
    dev = manager.default("cpu")
    props = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
    try:
        q = cl.CommandQueue(dev.context, properties=props)
    except cl.Error:
        pytest.skip("this device makes no out-of-order queues")
    assert device_of(q).pool is None and isinstance(dev.pool, cl_tools.MemoryPool)
    a = Tensor.empty(q, (N,))
    assert type(a.buffer) is cl.Buffer                 # not a PooledBuffer
    assert type(Tensor.empty(dev, (N,)).buffer) is cl_tools.PooledBuffer


def test_release_idle_lets_idle_buffers_go():
    dev = manager.default("cpu")
    dev.release_idle()
    held = Tensor.empty(dev, (N, 3))
    idle = Tensor.empty(dev, (N, 3))
    del idle
    assert dev.pool.held_blocks == 1
    dev.release_idle()
    assert dev.pool.held_blocks == 0
    assert dev.pool.active_blocks >= 1               # held is still in use
    filled_again = overwrite_every_free_buffer(dev.queue, (N, 3))
    assert held.buffer.int_ptr not in {t.buffer.int_ptr for t in filled_again}


def test_idle_buffers_beyond_keep_bytes_are_let_go(monkeypatch):
    dev = manager.default("cpu")
    dev.release_idle()
    monkeypatch.setattr(pool, "KEEP_BYTES", 3 * N * 5 * 4)   # room for 3
    tensors = [Tensor.empty(dev, (N, 5)) for _ in range(5)]
    del tensors
    assert dev.pool.held_blocks == 5     # idle, not yet over the limit
    kept = Tensor.empty(dev, (N, 5))     # the next allocation lets them go
    assert dev.pool.held_blocks == 0 and kept.shape == (N, 5)


def test_pooling_can_be_turned_off():
    code = ("from netcl_lite.core.device import manager\n"
            "from netcl_lite.core.tensor import Tensor\n"
            "dev = manager.default('cpu')\n"
            "t = Tensor.empty(dev, (64,))\n"
            "print(dev.pool, type(t.buffer).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, env={**os.environ, "NETCL_POOL": "0"},
                         check=True)
    assert out.stdout.split() == ["None", "Buffer"]


def test_idle_buffers_are_freed_before_a_request_is_refused(monkeypatch):
    """A request that fits under ``ulimit -v`` only once the pool lets go
    of its idle buffers is not refused (they count as used memory)."""
    from netcl_lite.core import tensor as tensor_module
    dev = manager.default("cpu")
    if not dev.host_memory:
        pytest.skip("the device's buffers are not in this process's memory")
    dev.release_idle()
    idle = Tensor.empty(dev, (1 << 19,))          # 2 MiB, then idle
    del idle
    seen = []

    def left_after_release():
        seen.append(dev.pool.held_blocks)
        return 0 if len(seen) == 1 else 1 << 40
    monkeypatch.setattr(tensor_module, "host_bytes_left", left_after_release)
    Tensor.empty(dev, (1 << 20,))
    assert seen == [1, 0]


def test_each_device_owns_its_pool():
    dev = manager.default("cpu")
    assert Tensor.empty(dev.queue, (N,)).device.pool is dev.pool
    mine = device_of(cl.CommandQueue(dev.context))
    assert mine.pool is not dev.pool
