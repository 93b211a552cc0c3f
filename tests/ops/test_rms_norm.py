import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.tensor import Tensor


@pytest.mark.parametrize("shape,eps", [
    ((1, 5), 1e-6),          # one row
    ((37, 13), 1e-6),        # S=37, D odd
    ((2, 3, 37, 10), 1e-6),  # B>1, H>1
    ((4, 7), 0.5),           # a large eps matters
    ((3, 341, 9), 1e-6),     # R = 1023: 4 rows per backward block, last short
    ((600, 1), 0.5),         # D = 1 (a large eps: smooth for the differences)
])
def test_rms_norm_gradcheck(queue, rng, shape, eps):
    x = rng.standard_normal(shape)
    w = rng.standard_normal(shape[-1:])
    check_op(queue, lambda a, b: F.rms_norm(a, b, eps=eps),
             functools.partial(ref.rms_norm, eps=eps),
             lambda a, b, g: ref.rms_norm_vjp(a, b, g, eps=eps), [x, w])


def test_rms_norm_unit_rms_and_deterministic(queue, rng):
    x = (rng.standard_normal((64, 40)) * 100).astype(np.float32)
    w = np.ones(40, np.float32)
    g = rng.standard_normal((64, 40)).astype(np.float32)
    grads = []
    for _ in range(2):
        with ag.Tape() as tape:
            xn = ag.tensor(Tensor.from_host(queue, x))
            wn = ag.tensor(Tensor.from_host(queue, w))
            out = F.rms_norm(xn, wn)
        tape.backward(out, grad=Tensor.from_host(queue, g))
        grads.append((xn.grad.to_host(), wn.grad.to_host()))
    y = out.value.to_host()
    np.testing.assert_allclose(np.sqrt(np.mean(y**2, axis=-1)), 1.0, rtol=1e-5)
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_rms_norm_errors(queue):
    x = Tensor.from_host(queue, np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"\(4,\).*\(5,\)"):
        F.rms_norm(x, Tensor.from_host(queue, np.ones(5)))
    with pytest.raises(ValueError, match="eps"):
        F.rms_norm(x, Tensor.from_host(queue, np.ones(4)), eps=-1.0)


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(st.integers(1, 5), max_size=3), D=st.integers(1, 33),
       seed=st.integers(0, 99))
def test_rms_norm_property(queue, lead, D, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*lead, D)).astype(np.float32)
    w = rng.standard_normal(D).astype(np.float32)
    g = rng.standard_normal((*lead, D)).astype(np.float32)
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        wn = ag.tensor(Tensor.from_host(queue, w))
        out = F.rms_norm(xn, wn)
    tape.backward(out, grad=Tensor.from_host(queue, g))
    x64, w64, g64 = (a.astype(np.float64) for a in (x, w, g))
    gx, gw = ref.rms_norm_vjp(x64, w64, g64)
    np.testing.assert_allclose(out.value.to_host(), ref.rms_norm(x64, w64),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xn.grad.to_host(), gx, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(wn.grad.to_host(), gw, rtol=1e-3, atol=1e-4)
