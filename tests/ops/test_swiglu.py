import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.program import LOCAL_1D, launch
from netcl_lite.core.tensor import Tensor

# sizes around the CPU's 256 values per work-item and 64 work-items per group
SHAPES = [(1,), (37,), (2, 3, 37, 5), (257,), (3, 5477)]


@pytest.mark.parametrize("shape", SHAPES)
def test_swiglu_gradcheck(queue, rng, shape):
    check_op(queue, F.swiglu, ref.swiglu, ref.swiglu_vjp,
             [rng.standard_normal(shape) * 3, rng.standard_normal(shape)])


def _both_routes(queue, a, b, g):
    """(out, grad_a, grad_b) of swiglu(a, b) and of mul(silu(a), b)."""
    results = []
    for fused in (True, False):
        with ag.Tape() as tape:
            an = ag.tensor(Tensor.from_host(queue, a))
            bn = ag.tensor(Tensor.from_host(queue, b))
            out = F.swiglu(an, bn) if fused else F.mul(F.silu(an), bn)
        tape.backward(out, grad=Tensor.from_host(queue, g))
        results.append((out.value.to_host(), an.grad.to_host(),
                        bn.grad.to_host()))
    return results


@pytest.mark.parametrize("shape", [(5,), (2048 * 3 + 7,)])
def test_swiglu_is_silu_then_mul_bit_for_bit(queue, rng, shape):
    a = rng.standard_normal(shape) * 4
    b, g = rng.standard_normal(shape), rng.standard_normal(shape)
    fused, unfused = _both_routes(queue, a, b, g)
    for got, want in zip(fused, unfused):
        np.testing.assert_array_equal(got, want)


def test_swiglu_large_inputs_stay_finite(queue):
    a = np.array([-1e30, -1e4, -100.0, -20.0, 0.0, 20.0, 100.0, 1e4, 1e30])
    b = np.linspace(-2.0, 2.0, a.size)
    g = np.ones_like(a)
    (out, ga, gb), _ = _both_routes(queue, a, b, g)
    assert np.isfinite(out).all() and np.isfinite(ga).all()
    assert np.isfinite(gb).all()
    np.testing.assert_allclose(out, ref.swiglu(a, b), rtol=1e-6, atol=1e-30)
    want_ga, want_gb = ref.swiglu_vjp(a, b, g)
    np.testing.assert_allclose(ga, want_ga, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gb, want_gb, rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("items", [1, 3, 64, 200])
def test_any_number_of_work_items_covers_every_value(queue, rng, items):
    """The kernels split n values into runs over however many work-items
    they get (a CPU gets ~n/256, a GPU n): every split gives the same."""
    n = 301
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    an, bn = Tensor.from_host(queue, a), Tensor.from_host(queue, b)
    out = Tensor.from_host(queue, np.full(n + 3, np.nan))   # 3 guard values
    launch(queue, "swiglu", "swiglu_forward", (items,), LOCAL_1D, an, bn, out, n)
    got = out.to_host()
    np.testing.assert_allclose(got[:n], ref.swiglu(a, b), rtol=1e-5, atol=1e-6)
    assert np.isnan(got[n:]).all()                          # nothing past n


def test_swiglu_shape_mismatch_is_named(queue):
    a = Tensor.from_host(queue, np.ones((2, 3)))
    b = Tensor.from_host(queue, np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"swiglu: shapes \(2, 3\) and \(3, 2\)"):
        F.swiglu(a, b)
