import numpy as np
import pyopencl as cl
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.device import context_of, manager
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import queue_name


def test_round_trip_and_casts(queue):
    x = np.arange(12.0).reshape(3, 4)               # float64 -> float32
    t = Tensor.from_host(queue, x)
    assert t.dtype == np.float32 and t.shape == (3, 4)
    np.testing.assert_array_equal(t.to_host(), x.astype(np.float32))
    ids = Tensor.from_host(queue, np.array([1, 2, 3], dtype=np.int64))
    assert ids.dtype == np.int32
    assert Tensor.from_host(queue, np.float64(2.5)).shape == ()


def test_int64_that_does_not_fit_names_the_value(queue):
    with pytest.raises(ValueError, match="4294967296"):
        Tensor.from_host(queue, np.array([1, 2**32]))


def test_unsupported_dtype(queue):
    with pytest.raises(ValueError, match="complex128"):
        Tensor.from_host(queue, np.zeros(3, complex))
    with pytest.raises(ValueError, match="CommandQueue"):
        Tensor.from_host("not a queue", np.zeros(3))


def test_reshape_is_a_view(queue):
    t = Tensor.from_host(queue, np.arange(6.0))
    v = t.reshape(2, -1)
    assert v.buffer is t.buffer and v.shape == (2, 3)
    with pytest.raises(ValueError, match=r"\(4, 2\)"):
        t.reshape(4, 2)


def test_empty_tensors(queue):
    t = Tensor.from_host(queue, np.zeros((0, 3)))
    assert t.to_host().shape == (0, 3)


def test_tensor_from_another_context_is_refused(queue):
    # the test holds the context: a queue alone does not keep it alive on
    # Intel's runtime (core/device.py: context_of)
    context = cl.Context([manager.default("auto").cl_device])
    other = cl.CommandQueue(context)
    a = Tensor.from_host(queue, np.ones(3))
    b = Tensor.from_host(other, np.ones(3))
    with pytest.raises(ValueError, match="another OpenCL context"):
        F.add(a, b)


def test_tensors_from_two_queues_of_one_context_are_refused(queue):
    """One queue per op (core/validate.py: check_tensors): the pool could
    reuse a buffer on one queue while a kernel on the other still reads
    it. The error names both queues; nothing runs."""
    other = cl.CommandQueue(context_of(queue))
    a = Tensor.from_host(queue, np.ones(3))
    b = Tensor.from_host(other, np.ones(3))
    with trace() as ran, pytest.raises(ValueError) as err:
        F.add(a, b)
    assert ran == []
    message = str(err.value)
    assert "add: input 1 was made on" in message and "one queue" in message
    assert queue_name(other) in message and queue_name(queue) in message
    assert queue_name(other) != queue_name(queue)
    with ag.Tape() as tape:               # backward's seed gradient too
        x = ag.tensor(Tensor.from_host(queue, np.ones(3)))
        y = F.mul(x, x)
    with pytest.raises(ValueError, match="grad was made on"):
        tape.backward(y, grad=b)


def test_ids_are_checked_from_the_copy_sent(queue, monkeypatch):
    """An id check reads the values kept by from_host: no read back, which
    would wait for every queued kernel."""
    from netcl_lite.core.validate import check_ids
    ids = Tensor.from_host(queue, np.array([[0, 3], [7, 1]]))
    monkeypatch.setattr(Tensor, "to_host", lambda self: pytest.fail("read back"))
    check_ids(ids, 8, "embedding")
    check_ids(ids.reshape(4), 8, "embedding")
    with pytest.raises(ValueError, match="id 7 at flat position 2"):
        check_ids(ids, 5, "embedding")


def test_from_host_does_not_keep_the_callers_array(queue):
    """The values are copied when the buffer is made: changing the array
    afterwards changes nothing on the device."""
    a = np.arange(6, dtype=np.int32)
    t = Tensor.from_host(queue, a)
    a[:] = 99
    assert t.to_host().tolist() == [0, 1, 2, 3, 4, 5]
    assert t.host_ids().tolist() == [0, 1, 2, 3, 4, 5]


def test_more_values_than_an_int_can_count_is_refused(queue, monkeypatch):
    # a device with room for 8 GiB in one buffer (Intel's runtime on a big
    # machine): 2^31 float32 values still cannot be indexed by int sizes
    from netcl_lite.core import tensor as tensor_module
    monkeypatch.setattr(tensor_module, "check_fits", lambda *a: 2**40)
    with pytest.raises(ValueError, match=r"2147483648 values, more than "
                                         r"2147483647 \(2\^31 - 1\)"):
        Tensor.empty(queue, (2**16, 2**15))
    with pytest.raises(ValueError, match="32-bit"):
        Tensor.zeros(queue, (2**31,), np.int32)
