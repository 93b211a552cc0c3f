"""core/pool.py: a buffer is reused only when no Tensor holds it."""

import subprocess
import sys

import numpy as np
import pyopencl as cl

from netcl_lite.core import pool
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor


def queue():
    return manager.default("cpu").queue


def test_an_idle_buffer_is_reused():
    q = queue()
    a = Tensor.empty(q, (123, 7))
    ptr = a.buffer.int_ptr
    del a
    assert Tensor.empty(q, (123, 7)).buffer.int_ptr == ptr


def test_a_buffer_held_by_a_tensor_or_a_view_is_not_reused():
    q = queue()
    a = Tensor.from_host(q, np.arange(77, dtype=np.float32))
    view = a.reshape(7, 11)
    ptr = a.buffer.int_ptr
    del a
    others = [Tensor.empty(q, (77,)) for _ in range(3)]
    assert all(t.buffer.int_ptr != ptr for t in others)
    np.testing.assert_array_equal(view.to_host().ravel(), np.arange(77))


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
    dev = manager.default("cpu")
    props = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
    try:
        q = cl.CommandQueue(dev.context, properties=props)
    except cl.Error:
        return      # the device has no out-of-order queues: nothing to check
    pool.take(q, 4096)
    pool.take(q, 4096)
    assert not pool._pools[q.int_ptr].by_size      # never listed, never reused


def test_trim_lets_idle_buffers_go():
    q = queue()
    held = pool.take(q, 8192)
    idle = pool.take(q, 8192)
    del idle
    pool.release_idle()
    listed = pool._pools[q.int_ptr].by_size.get(8192, [])
    assert [b.int_ptr for b in listed] == [held.int_ptr]


def test_pooling_can_be_turned_off():
    code = ("from netcl_lite.core import pool\n"
            "from netcl_lite.core.device import manager\n"
            "q = manager.default('cpu').queue\n"
            "pool.take(q, 64)\n"
            "print(len(pool._pools))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, env={**__import__("os").environ,
                                         "NETCL_POOL": "0"}, check=True)
    assert out.stdout.strip() == "0"


def test_idle_buffers_are_freed_before_a_request_is_refused(monkeypatch):
    """A request that fits only once the pool lets go of its idle buffers
    is not refused."""
    from netcl_lite.core import tensor as tensor_module
    q = queue()
    idle = Tensor.empty(q, (1 << 19,))          # 2 MiB, then idle
    del idle
    calls = []

    def fits_after_release(queue, nbytes, what):
        calls.append(sum(n * len(bs) for n, bs in
                         pool._pools[q.int_ptr].by_size.items()))
        if len(calls) == 1:
            raise ValueError(f"{what}: no room")
        return 1 << 40
    monkeypatch.setattr(tensor_module, "check_fits", fits_after_release)
    Tensor.empty(q, (1 << 20,))
    assert len(calls) == 2 and calls[1] < calls[0]
