import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor


def test_tape_replays_in_reverse_and_accumulates(queue):
    x0 = np.array([1.0, -2.0, 3.0])
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, x0))
        y = F.mul(x, x)                       # x used twice: grads add up
        loss = F.sum(F.add(y, F.scale(x, 3.0)))
    tape.backward(loss)
    np.testing.assert_allclose(x.grad.to_host(), 2 * x0 + 3)
    assert [rec[0] for rec in tape.records][-1] is loss


def test_deep_chain_needs_no_recursion(queue):
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, np.ones(4)))
        y = x
        for _ in range(3000):                 # deeper than Python's stack
            y = F.scale(y, 1.0)
        loss = F.sum(y)
    tape.backward(loss)
    np.testing.assert_array_equal(x.grad.to_host(), np.ones(4))


def test_constants_get_no_gradient(queue):
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, np.ones(2)))
        w = ag.tensor(Tensor.from_host(queue, np.ones(2)), requires_grad=False)
        loss = F.sum(F.mul(x, w))
    tape.backward(loss)
    assert w.grad is None and x.grad is not None


def test_no_tape_no_records(queue):
    x = ag.tensor(Tensor.from_host(queue, np.ones(2)))
    y = F.scale(x, 2.0)
    np.testing.assert_array_equal(y.value.to_host(), [2.0, 2.0])


def test_backward_needs_a_scalar(queue):
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, np.ones((2, 2))))
        y = F.scale(x, 2.0)
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        tape.backward(y)


def test_failed_op_records_nothing(queue):
    with ag.Tape() as tape:
        a = ag.tensor(Tensor.from_host(queue, np.ones((2, 3))))
        b = ag.tensor(Tensor.from_host(queue, np.ones((4, 5))))
        with pytest.raises(ValueError):
            F.matmul(a, b)
    assert tape.records == []


def test_trace_names_the_kernels_that_ran(queue):
    from netcl_lite.core.program import trace
    a = Tensor.from_host(queue, np.ones((2, 2)))
    with trace() as ran:
        F.sum(F.matmul(a, a))
    assert ran == ["matmul.cl:matmul_forward", "reduce.cl:sum_partial",
                   "reduce.cl:sum_final"]


def test_a_numpy_array_gets_told_how_to_become_a_tensor():
    import netcl_lite.functional as F

    with pytest.raises(ValueError, match=r"ndarray; .*Tensor\.from_host\(queue, array\)"):
        F.softmax(np.ones(3, dtype=np.float32))


def test_is_recording_follows_the_open_tapes():
    assert not ag.is_recording()
    with ag.Tape():
        assert ag.is_recording()
        with ag.Tape():
            assert ag.is_recording()
        assert ag.is_recording()
    assert not ag.is_recording()


def test_every_record_names_its_op(queue):
    x_host = np.arange(6.0).reshape(2, 3)
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, x_host))
        y = F.transpose(F.reshape(F.scale(x, 2.0), (3, 2)), 0, 1)   # (2, 3)
        loss = F.sum(F.mul(F.softmax(F.add(y, x)), x))
    ops = [out.op for out, _, _ in tape.records]
    assert ops == ["scale", "reshape", "permute", "add", "softmax", "mul",
                   "sum"]
    assert loss.op == "sum" and x.op is None       # a leaf was made by no op


def test_backward_hook_marks_each_record_and_the_sums(queue):
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, [1.0, 2.0]))
        loss = F.sum(F.mul(x, x))          # x is used twice: its grads add up
    marks = []
    with trace() as ran:
        tape.backward(loss, hook=lambda i: marks.append((i, len(ran))))
    assert [i for i, _ in marks] == [1, None, 0, None]   # sum, then mul
    first_mul, sums = marks[2][1], marks[3][1]
    assert ran[first_mul:sums] == ["elementwise.cl:mul_backward"]
    assert ran[sums:] == ["elementwise.cl:add_forward"]  # grad x + grad x
    np.testing.assert_allclose(x.grad.to_host(), [2.0, 4.0])
