import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.tensor import Tensor


@pytest.mark.parametrize("shape,n_rep", [
    ((1, 1, 1, 1), 3),      # S=1
    ((2, 3, 37, 5), 2),     # B>1, HKV>1, S=37, d_k odd
    ((2, 2, 4, 7), 4),
    ((1, 4, 6, 8), 1),      # no repetition: x itself
])
def test_repeat_kv_gradcheck(queue, rng, shape, n_rep):
    check_op(queue, lambda x: F.repeat_kv(x, n_rep),
             lambda x: ref.repeat_kv(x, n_rep),
             lambda x, g: ref.repeat_kv_vjp(x, n_rep, g),
             [rng.standard_normal(shape)])


def test_repeat_kv_head_map_and_backward_sums(queue, rng):
    B, HKV, S, d_k, n_rep = 2, 3, 5, 7, 4
    x = rng.standard_normal((B, HKV, S, d_k)).astype(np.float32)
    g = rng.standard_normal((B, HKV * n_rep, S, d_k)).astype(np.float32)
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        out = F.repeat_kv(xn, n_rep)
    tape.backward(out, grad=Tensor.from_host(queue, g))
    y = out.value.to_host()
    for h in range(HKV * n_rep):  # GQA: query head h reads kv head h // n_rep
        np.testing.assert_array_equal(y[:, h], x[:, h // n_rep])
    want = sum(g[:, r::n_rep] for r in range(n_rep))  # copies r of every kv head
    np.testing.assert_allclose(xn.grad.to_host(), want, rtol=1e-6, atol=1e-6)


def test_repeat_kv_identity_and_errors(queue):
    x = ag.tensor(Tensor.from_host(queue, np.zeros((1, 2, 3, 4))))
    assert F.repeat_kv(x, 1) is x
    with pytest.raises(ValueError, match=r"\(B, HKV, S, d_k\).*\(2, 3, 4\)"):
        F.repeat_kv(Tensor.from_host(queue, np.zeros((2, 3, 4))), 2)
    with pytest.raises(ValueError, match="n_rep.*0"):
        F.repeat_kv(x, 0)


@settings(max_examples=15, deadline=None)
@given(B=st.integers(1, 3), HKV=st.integers(1, 4), S=st.integers(1, 40),
       d_k=st.integers(1, 12), n_rep=st.integers(1, 5), seed=st.integers(0, 99))
def test_repeat_kv_property(queue, B, HKV, S, d_k, n_rep, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, HKV, S, d_k)).astype(np.float32)
    g = rng.standard_normal((B, HKV * n_rep, S, d_k)).astype(np.float32)
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        out = F.repeat_kv(xn, n_rep)
    tape.backward(out, grad=Tensor.from_host(queue, g))
    np.testing.assert_array_equal(out.value.to_host(), ref.repeat_kv(x, n_rep))
    np.testing.assert_allclose(xn.grad.to_host(), ref.repeat_kv_vjp(x, n_rep, g)[0],
                               rtol=1e-5, atol=1e-5)
