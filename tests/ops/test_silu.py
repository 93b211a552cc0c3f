import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.tensor import Tensor


@pytest.mark.parametrize("shape", [(1,), (37,), (2, 3, 37, 5)])
def test_silu_gradcheck(queue, rng, shape):
    check_op(queue, F.silu, ref.silu, ref.silu_vjp, [rng.standard_normal(shape) * 3])


def test_silu_large_inputs_stay_finite(queue):
    x = np.array([-1e30, -1e4, -100.0, -20.0, 0.0, 20.0, 100.0, 1e4, 1e30])
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        out = F.silu(xn)
    tape.backward(out, grad=Tensor.from_host(queue, np.ones_like(x)))
    y, gx = out.value.to_host(), xn.grad.to_host()
    assert np.isfinite(y).all() and np.isfinite(gx).all()
    np.testing.assert_allclose(y, ref.silu(x), rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(gx, ref.silu_vjp(x, np.ones_like(x))[0],
                               rtol=1e-6, atol=1e-7)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       scale=st.sampled_from([1.0, 10.0, 100.0]), seed=st.integers(0, 99))
def test_silu_property(queue, shape, scale, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        out = F.silu(xn)
    tape.backward(out, grad=Tensor.from_host(queue, g))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out.value.to_host(), ref.silu(x64),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xn.grad.to_host(), ref.silu_vjp(x64, g)[0],
                               rtol=1e-5, atol=1e-6)
