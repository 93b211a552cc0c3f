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


@pytest.mark.parametrize("V,D,ids_shape", [
    (1, 1, (1,)),           # one token
    (5, 3, (37,)),          # many repeats
    (11, 13, (2, 37)),      # B>1, S=37
    (7, 10, (2, 3, 4)),
])
def test_embedding_gradcheck(queue, rng, V, D, ids_shape):
    table = rng.standard_normal((V, D))
    ids = rng.integers(0, V, ids_shape)
    ids_t = Tensor.from_host(queue, ids)  # a constant: check_op perturbs floats
    check_op(queue, lambda t: F.embedding(t, ids_t),
             lambda t: ref.embedding(t, ids),
             lambda t, g: ref.embedding_vjp(t, ids, g)[:1], [table])


def test_embedding_repeated_ids_accumulate(queue, rng):
    V, D = 6, 9
    table = rng.standard_normal((V, D)).astype(np.float32)
    ids = np.array([[3, 3, 0, 3], [5, 0, 3, 3]], np.int32)
    g = rng.standard_normal((2, 4, D)).astype(np.float32)
    with ag.Tape() as tape:
        tn = ag.tensor(Tensor.from_host(queue, table))
        out = F.embedding(tn, ag.tensor(Tensor.from_host(queue, ids),
                                        requires_grad=False))
    tape.backward(out, grad=Tensor.from_host(queue, g))
    np.testing.assert_array_equal(out.value.to_host(), table[ids])
    want = np.zeros((V, D))
    np.add.at(want, ids.ravel(), g.reshape(-1, D))
    got = tn.grad.to_host()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not got[[1, 2, 4]].any()                 # unseen ids: zero gradient
    tape.backward(out, grad=Tensor.from_host(queue, g))  # same bits again
    np.testing.assert_array_equal(tn.grad.to_host(), 2 * got)


def test_embedding_errors(queue):
    table = Tensor.from_host(queue, np.zeros((5, 3)))
    bad = Tensor.from_host(queue, np.array([1, 7, 9], np.int32))
    with trace() as ran, pytest.raises(ValueError, match=r"id 7 .*V=5"):
        F.embedding(table, bad)
    assert ran == []                              # checked before any kernel
    with pytest.raises(ValueError, match=r"id -2 .*V=5"):
        F.embedding(table, Tensor.from_host(queue, np.array([[0], [-2]], np.int32)))
    with pytest.raises(ValueError, match="ids must be int32.*float32"):
        F.embedding(table, Tensor.from_host(queue, np.array([1.0])))
    with pytest.raises(ValueError, match=r"\(V, D\)"):
        F.embedding(Tensor.from_host(queue, np.zeros(5)),
                    Tensor.from_host(queue, np.array([1], np.int32)))


@settings(max_examples=15, deadline=None)
@given(V=st.integers(1, 20), D=st.integers(1, 17),
       ids_shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       seed=st.integers(0, 99))
def test_embedding_property(queue, V, D, ids_shape, seed):
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((V, D)).astype(np.float32)
    ids = rng.integers(0, V, ids_shape).astype(np.int32)
    g = rng.standard_normal((*ids_shape, D)).astype(np.float32)
    with ag.Tape() as tape:
        tn = ag.tensor(Tensor.from_host(queue, table))
        out = F.embedding(tn, Tensor.from_host(queue, ids))
    tape.backward(out, grad=Tensor.from_host(queue, g))
    np.testing.assert_array_equal(out.value.to_host(), table[ids])
    np.testing.assert_allclose(tn.grad.to_host(),
                               ref.embedding_vjp(table, ids, g)[0],
                               rtol=1e-5, atol=1e-5)
