import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor


@pytest.mark.parametrize("logits_shape", [
    (1, 1),          # one class: loss 0, gradient 0
    (5,),            # a single row, targets of shape ()
    (1, 5),
    (37, 11),        # S=37, V odd
    (2, 3, 7),       # B>1 rows
])
def test_cross_entropy_gradcheck(queue, rng, logits_shape):
    logits = rng.standard_normal(logits_shape) * 2
    targets = rng.integers(0, logits_shape[-1], logits_shape[:-1])
    t = Tensor.from_host(queue, targets)  # a constant: check_op perturbs floats
    check_op(queue, lambda x: F.cross_entropy(x, t),
             lambda x: ref.cross_entropy(x, targets),
             lambda x, g: ref.cross_entropy_vjp(x, targets, g)[:1], [logits])


def _run(queue, logits, targets):
    with ag.Tape() as tape:
        ln = ag.tensor(Tensor.from_host(queue, logits))
        loss = F.cross_entropy(ln, Tensor.from_host(queue, targets))
    tape.backward(loss)
    return loss, ln.grad.to_host()


def test_cross_entropy_matches_log_softmax(queue, rng):
    logits = rng.standard_normal((4, 9)).astype(np.float32)
    targets = np.array([0, 8, 3, 3], np.int32)
    loss, grad = _run(queue, logits, targets)
    x = logits.astype(np.float64)
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))   # the textbook formula
    assert loss.shape == ()
    np.testing.assert_allclose(loss.value.to_host(),
                               -lp[np.arange(4), targets].mean(), rtol=1e-6)
    np.testing.assert_allclose(grad.sum(-1), 0.0, atol=1e-7)  # rows sum to 0


def test_cross_entropy_huge_logits_are_stable(queue):
    logits = np.array([[1e30, 0.0, -1e30],
                       [3e4, 3e4, -3e38],
                       [1e38, 3e38, 2e38]], np.float32)
    targets = np.array([1, 0, 1], np.int32)
    loss, grad = _run(queue, logits, targets)
    x = logits.astype(np.float64)
    assert np.isfinite(loss.value.to_host()) and np.isfinite(grad).all()
    np.testing.assert_allclose(loss.value.to_host(),
                               ref.cross_entropy(x, targets), rtol=1e-6)
    np.testing.assert_allclose(grad, ref.cross_entropy_vjp(x, targets, 1.0)[0],
                               atol=1e-7)


def test_cross_entropy_errors(queue):
    logits = Tensor.from_host(queue, np.zeros((3, 5)))
    bad = Tensor.from_host(queue, np.array([0, 5, 9], np.int32))
    with trace() as ran, pytest.raises(ValueError, match=r"target 5 .*V=5"):
        F.cross_entropy(logits, bad)
    assert ran == []                              # checked before any kernel
    with pytest.raises(ValueError, match=r"target -1 .*V=5"):
        F.cross_entropy(logits, Tensor.from_host(queue, np.array([-1, 0, 0], np.int32)))
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        F.cross_entropy(logits, Tensor.from_host(queue, np.array([0, 1], np.int32)))
    with pytest.raises(ValueError, match="int32"):
        F.cross_entropy(logits, Tensor.from_host(queue, np.zeros(3)))


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(st.integers(1, 6), min_size=1, max_size=2),
       V=st.integers(1, 40), scale=st.sampled_from([1.0, 30.0, 1e4]),
       seed=st.integers(0, 99))
def test_cross_entropy_property(queue, lead, V, scale, seed):
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((*lead, V)) * scale).astype(np.float32)
    targets = rng.integers(0, V, lead).astype(np.int32)
    loss, grad = _run(queue, logits, targets)
    x = logits.astype(np.float64)
    np.testing.assert_allclose(loss.value.to_host(), ref.cross_entropy(x, targets),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, ref.cross_entropy_vjp(x, targets, 1.0)[0],
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("V", [7, 8, 150, 1024, 1031])   # 8 lanes, and tails
def test_cross_entropy_wide_rows(queue, rng, V):
    logits = (rng.standard_normal((7, V)) * 3).astype(np.float32)
    targets = rng.integers(0, V, 7).astype(np.int32)
    loss, grad = _run(queue, logits, targets)
    x = logits.astype(np.float64)
    np.testing.assert_allclose(loss.value.to_host(), ref.cross_entropy(x, targets),
                               rtol=1e-6)
    np.testing.assert_allclose(grad, ref.cross_entropy_vjp(x, targets, 1.0)[0],
                               rtol=1e-5, atol=1e-8)
