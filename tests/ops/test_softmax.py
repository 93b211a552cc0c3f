import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op, run_op
from netcl_lite.core.tensor import Tensor


def check_softmax(queue, x, causal):
    check_op(queue, lambda t: F.softmax(t, causal=causal),
             lambda t: ref.softmax(t, causal),
             lambda t, g: ref.softmax_vjp(t, g, causal), [x])


@pytest.mark.parametrize("shape", [(1,), (37,), (3, 5), (2, 3, 37), (2, 3, 1, 7)])
def test_softmax(queue, rng, shape):
    check_softmax(queue, 2 * rng.standard_normal(shape), causal=False)


@pytest.mark.parametrize("shape", [
    (1, 1), (37, 37), (2, 3, 5, 5), (2, 1, 7),   # Sq == Sk, one new row
    (2, 3, 4, 9), (5, 3), (2, 37, 13),           # Sq < Sk and Sq > Sk
])
def test_causal_softmax(queue, rng, shape):
    check_softmax(queue, 2 * rng.standard_normal(shape), causal=True)


def test_causal_mask_is_bottom_right_aligned(queue):
    y = F.softmax(Tensor.from_host(queue, np.zeros((2, 4))), causal=True)
    assert np.allclose(y.value.to_host(), [[1 / 3, 1 / 3, 1 / 3, 0],
                                           [1 / 4, 1 / 4, 1 / 4, 1 / 4]])
    last = F.softmax(Tensor.from_host(queue, np.zeros((1, 5))), causal=True)
    assert np.allclose(last.value.to_host(), 0.2)        # one new query row


def test_huge_logits_are_stable(queue):
    x = np.array([[1e30, -1e30, 3e38],
                  [-3e38, 3e38, 0.0],
                  [1e30, 1e30, -1e30],
                  [-3e38, -3e38, -3e38]])
    y, (gx,) = run_op(queue, F.softmax, [x], w=np.ones_like(x))
    assert np.isfinite(y).all() and np.isfinite(gx).all()
    want = [[0, 0, 1], [0, 1, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]]
    assert np.allclose(y, want, atol=1e-7, rtol=0)
    assert np.allclose(y.sum(-1), 1.0, atol=1e-6, rtol=0)
    # huge logits inside the causal mask too
    yc = F.softmax(Tensor.from_host(queue, np.full((3, 3), 3e38)), causal=True)
    assert np.allclose(yc.value.to_host(), np.tril(np.ones((3, 3)))
                       / np.arange(1, 4)[:, None], atol=1e-7, rtol=0)


def test_fully_masked_rows_are_zeros_not_nan(queue, rng):
    x = rng.standard_normal((2, 6, 4)) * 1e3         # Sq=6 > Sk=4
    y, (gx,) = run_op(queue, lambda t: F.softmax(t, causal=True), [x],
                      w=rng.standard_normal(x.shape))
    assert np.array_equal(y[:, :2], np.zeros((2, 2, 4)))  # rows 0, 1 see nothing
    assert np.array_equal(gx[:, :2], np.zeros((2, 2, 4)))
    assert np.allclose(y[:, 2:].sum(-1), 1.0, atol=1e-6, rtol=0)
    inf_row = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]])
    yi = F.softmax(Tensor.from_host(queue, inf_row)).value.to_host()
    assert np.array_equal(yi, [[0, 0, 0], [0.5, 0, 0.5]])


def test_rows_sum_to_one_and_are_deterministic(queue, rng):
    x = Tensor.from_host(queue, 5 * rng.standard_normal((3, 37, 37)))
    for causal in (False, True):
        y1 = F.softmax(x, causal=causal).value.to_host()
        y2 = F.softmax(x, causal=causal).value.to_host()
        assert np.array_equal(y1, y2)
        assert np.allclose(y1.sum(-1), 1.0, atol=1e-6, rtol=0)
        assert (y1 >= 0).all()


def test_errors_name_the_shape(queue):
    with pytest.raises(ValueError, match=r"at least 2 dims.*\(5,\)"):
        F.softmax(Tensor.from_host(queue, np.zeros(5)), causal=True)
    with pytest.raises(ValueError, match="dtype int32"):
        F.softmax(Tensor.from_host(queue, np.zeros((2, 3), np.int32)))


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(st.integers(1, 3), max_size=2), sq=st.integers(1, 9),
       sk=st.integers(1, 9), causal=st.booleans(), seed=st.integers(0, 2**16))
def test_softmax_random_shapes(queue, lead, sq, sk, causal, seed):
    x = 3 * np.random.default_rng(seed).standard_normal((*lead, sq, sk))
    check_softmax(queue, x, causal)


def test_long_rows_sum_accurately(queue, rng):
    # One running float32 sum over 20000 columns piles up its rounding
    # errors: it was off by 1.5e-5 of the largest value here; the 8 lanes
    # of 2500 terms (kernels/softmax.cl) by 4e-7.
    x = 3 * rng.standard_normal((2, 20000))
    y, _ = run_op(queue, F.softmax, [x])
    want = ref.softmax(x.astype(np.float32))        # the kernel's own input
    err = np.abs(y - want).max() / want.max()
    assert err < 4e-6, err


def test_sharply_peaked_row_gradient(queue, rng):
    # The first logit is 20 above the others: y[0] ~ 1, the rest ~ 2e-9.
    # In sum(g * y) a running sum that starts with the peak term (~1)
    # rounds every later term away (each is below half a unit in the last
    # place of ~1): it loses all 4098 of them, ~8e-6. In 8 lanes only the
    # peak's lane loses its terms, 1/8 of them. g > 0 makes the lost terms
    # add up (not cancel by chance), and g[0] = 1 makes the peak term ~1.
    x = 0.1 * rng.standard_normal((8, 4099))
    x[:, 0] += 20.0
    g = rng.uniform(0.5, 1.5, x.shape)
    g[:, 0] = 1.0
    y, (gx,) = run_op(queue, F.softmax, [x], w=g)
    # the float64 vjp of the kernel's own y: this checks the backward alone
    y64, g64 = y.astype(np.float64), g.astype(np.float32).astype(np.float64)
    want = y64 * (g64 - np.sum(g64 * y64, axis=-1, keepdims=True))
    err = np.abs(gx - want).max()      # sum(g * y) is ~1: an absolute error
    assert err < 3e-6, err             # one running sum: 1e-5; 8 lanes: 1.3e-6
