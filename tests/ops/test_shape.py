import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.tensor import Tensor


@pytest.mark.parametrize("shape,axes", [
    ((1,), (0,)), ((37,), (-1,)), ((5, 7), (1, 0)), ((1, 37), (1, 0)),
    ((2, 3, 5), (2, 0, 1)), ((2, 37, 3, 5), (0, 2, 1, 3)),
    ((2, 3, 4, 5), (3, 1, 0, 2)), ((3, 1, 2, 1), (-1, -2, 0, 1)),
])
def test_permute(queue, rng, shape, axes):
    x = rng.standard_normal(shape)
    check_op(queue, lambda t: F.permute(t, axes),
             lambda t: ref.permute(t, axes),
             lambda t, g: ref.permute_vjp(t, g, axes), [x])


@pytest.mark.parametrize("shape,d0,d1", [
    ((5, 7), 0, 1), ((2, 37, 9), -1, -2), ((2, 3, 4, 5), 1, 2),
])
def test_transpose(queue, rng, shape, d0, d1):
    x = rng.standard_normal(shape)
    check_op(queue, lambda t: F.transpose(t, d0, d1),
             lambda t: ref.transpose(t, d0, d1),
             lambda t, g: ref.transpose_vjp(t, g, d0, d1), [x])


@pytest.mark.parametrize("shape,new", [
    ((6,), (2, 3)), ((2, 37), (-1,)), ((2, 3, 4), (4, -1, 3)), ((1,), ()),
])
def test_reshape(queue, rng, shape, new):
    x = rng.standard_normal(shape)
    check_op(queue, lambda t: F.reshape(t, new),
             lambda t: ref.reshape(t, new),
             lambda t, g: ref.reshape_vjp(t, g), [x])


def test_reshape_keeps_int_ids(queue):
    ids = Tensor.from_host(queue, np.arange(6).reshape(2, 3))
    out = F.reshape(ids, (3, -1))
    assert out.dtype == np.int32 and out.shape == (3, 2)
    assert np.array_equal(out.value.to_host(), np.arange(6).reshape(3, 2))


def test_head_split_and_merge(queue, rng):
    B, S, H, d_k = 2, 37, 3, 5
    x = rng.standard_normal((B, S, H * d_k)).astype(np.float32)
    t = F.reshape(Tensor.from_host(queue, x), (B, S, H, d_k))   # (B, S, H, d_k)
    heads = F.transpose(t, 1, 2)                              # (B, H, S, d_k)
    want = x.reshape(B, S, H, d_k).transpose(0, 2, 1, 3)
    assert np.array_equal(heads.value.to_host(), want)        # exact moves
    back = F.reshape(F.transpose(heads, 1, 2), (B, S, H * d_k))
    assert np.array_equal(back.value.to_host(), x)


def test_errors_name_the_numbers(queue):
    x5 = Tensor.from_host(queue, np.zeros((1, 2, 1, 2, 1)))
    with pytest.raises(ValueError, match="ndim 5"):
        F.permute(x5, (0, 1, 2, 3, 4))
    x = Tensor.from_host(queue, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"\(0, 0\).*not a permutation"):
        F.permute(x, (0, 0))
    with pytest.raises(ValueError, match="3 entries.*ndim 2"):
        F.permute(x, (0, 1, 2))
    with pytest.raises(ValueError, match="out of range for ndim 2"):
        F.permute(x, (0, 2))
    with pytest.raises(ValueError, match="dim 2 out of range.*ndim 2"):
        F.transpose(x, 0, 2)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2\)"):
        F.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="dtype int32"):
        F.permute(Tensor.from_host(queue, np.zeros((2, 3), np.int32)), (1, 0))


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4),
       seed=st.integers(0, 2**16))
def test_permute_random_shapes(queue, shape, seed):
    rng = np.random.default_rng(seed)
    axes = tuple(int(a) for a in rng.permutation(len(shape)))
    x = rng.standard_normal(shape)
    check_op(queue, lambda t: F.permute(t, axes),
             lambda t: ref.permute(t, axes),
             lambda t, g: ref.permute_vjp(t, g, axes), [x])


@pytest.mark.parametrize("shape,axes", [
    ((2, 1, 4, 3), (0, 2, 1, 3)),      # a decoding step: (B, 1, H, d_k)
    ((1, 5, 1), (2, 1, 0)), ((3, 1), (1, 0)),
])
def test_permute_of_size_one_axes_is_a_view(queue, rng, shape, axes):
    """Only size-1 axes move: no kernel, no copy, and still the right
    values and gradient."""
    from netcl_lite.core.program import trace
    x = Tensor.from_host(queue, rng.standard_normal(shape))
    with trace() as ran:
        out = F.permute(x, axes)
    assert ran == [] and out.value.buffer is x.buffer
    check_op(queue, lambda t: F.permute(t, axes),
             lambda t: ref.permute(t, axes),
             lambda t, g: ref.permute_vjp(t, g, axes),
             [rng.standard_normal(shape)])


def test_permute_that_moves_values_still_copies(queue, rng):
    x = Tensor.from_host(queue, rng.standard_normal((2, 3, 4)))
    assert F.permute(x, (1, 0, 2)).value.buffer is not x.buffer
