"""Hypothesis fuzz of the public functions: random shapes, dtypes, NaN and inf.

Every call either raises a ValueError/TypeError before any kernel runs, or
returns what the math gives: a numpy reference in float64, with NaN and inf
where IEEE arithmetic puts them (a NaN input makes NaN, never finite garbage).
The fused attention kernel is fuzzed with finite values only here;
tests/ops/test_flash_attention.py owns its NaN behaviour.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import netcl_lite.functional as F
import numpy_ref as ref
from netcl_lite.core.tensor import Tensor
from netcl_lite.text import BPETokenizer

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
SPECIAL = [np.nan, np.inf, -np.inf]
DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.int64])
shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)


def values(dtype, shape, special=True):
    """Arrays of ``dtype``; floats are |x| <= 1000, sometimes NaN or inf."""
    if np.dtype(dtype).kind == "i":
        return hnp.arrays(dtype, shape, elements=st.integers(-50, 50))
    finite = st.floats(-1000, 1000, width=32)
    elements = st.one_of(finite, st.sampled_from(SPECIAL)) if special else finite
    return hnp.arrays(dtype, shape, elements=elements)


def array(draw, shape=None, special=True, dtype=None):
    shape = draw(shapes) if shape is None else shape
    return draw(values(draw(DTYPES) if dtype is None else dtype, shape, special))


def same(got, want, rtol=1e-4, atol=1e-4):
    """NaN exactly where want has NaN, equal infinities, close elsewhere."""
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def run(queue, op, *arrays):
    """op on device tensors made from the arrays -> the result on the host,
    or None when the call was refused with a ValueError (ints, bad shapes)."""
    try:
        tensors = [Tensor.from_host(queue, a) for a in arrays]
        return op(*tensors).value.to_host()
    except ValueError:
        return None


def is_float(a):
    return a.dtype.kind == "f"


@FUZZ
@given(data=st.data())
def test_elementwise(queue, data):
    a = array(data.draw)
    b = data.draw(values(data.draw(DTYPES),
                         data.draw(st.sampled_from([a.shape, a.shape[::-1]]))))
    for op, want in ((F.add, np.add), (F.mul, np.multiply)):
        got = run(queue, op, a, b)
        if not (is_float(a) and is_float(b)) or a.shape != b.shape:
            assert got is None
            continue
        with np.errstate(all="ignore"):
            same(got, want(a.astype(np.float32).astype(np.float64),
                           b.astype(np.float32).astype(np.float64)))


@FUZZ
@given(data=st.data())
def test_unary(queue, data):
    x = array(data.draw)
    x64 = x.astype(np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        cases = [
            (lambda t: F.scale(t, 0.5), x64 * 0.5),
            (F.silu, ref.silu(x64)),
            (F.sum, np.array(x64.sum())),
            (lambda t: F.softmax(t, causal=False), ieee_softmax(x64)),
        ]
    for op, want in cases:
        got = run(queue, op, x)
        if not is_float(x):
            assert got is None
            continue
        same(got.reshape(want.shape), want, atol=1e-3 if op is F.sum else 1e-4)


def ieee_softmax(x):
    """A row with NaN or +inf is NaN (exp(inf - inf)); -inf gives 0."""
    out = ref.softmax(np.where(np.isfinite(x) | (x < 0), x, 0.0))
    bad = np.any(np.isnan(x) | (x == np.inf), axis=-1, keepdims=True)
    return np.where(bad, np.nan, out)


@FUZZ
@given(data=st.data())
def test_matmul(queue, data):
    M, K, N, K2 = (data.draw(st.integers(1, 5)) for _ in range(4))
    lead = data.draw(st.sampled_from([(), (2,), (1, 3)]))
    a = array(data.draw, (*lead, M, K))
    b = array(data.draw, (*lead, K2, N))
    got = run(queue, F.matmul, a, b)
    if not (is_float(a) and is_float(b)) or K != K2:
        assert got is None
        return
    a64, b64 = (x.astype(np.float32).astype(np.float64) for x in (a, b))
    with np.errstate(all="ignore"):  # the sum written out: IEEE inf * 0 = NaN
        want = (a64[..., :, :, None] * b64[..., None, :, :]).sum(axis=-2)
    same(got, want, atol=1e-2)


@FUZZ
@given(data=st.data())
def test_rms_norm(queue, data):
    x = array(data.draw)
    w = array(data.draw, (x.shape[-1],), dtype=np.float32)
    got = run(queue, F.rms_norm, x, w)
    if not is_float(x):
        assert got is None
        return
    with np.errstate(all="ignore"):
        want = ref.rms_norm(x.astype(np.float32).astype(np.float64),
                            w.astype(np.float64))
    same(got, want, rtol=1e-3, atol=1e-3)


@FUZZ
@given(data=st.data())
def test_embedding_and_cross_entropy_ids(queue, data):
    """Ids and targets anywhere in int32: outside [0, V) is a ValueError."""
    V, D, N = (data.draw(st.integers(1, 5)) for _ in range(3))
    ids = data.draw(hnp.arrays(np.int32, (N,), elements=st.integers(-3, V + 2)))
    table = array(data.draw, (V, D), dtype=np.float32)
    ok = bool(((ids >= 0) & (ids < V)).all())
    got = run(queue, F.embedding, table, ids)
    assert (got is None) != ok
    if ok:
        same(got, table[ids].astype(np.float64))
    logits = array(data.draw, (N, V), dtype=np.float32)
    got = run(queue, F.cross_entropy, logits, ids)
    assert (got is None) != ok
    if ok:
        finite = np.isfinite(logits).all(axis=-1)
        if finite.all():
            want = ref.cross_entropy(logits.astype(np.float64), ids)
            same(got.reshape(()), want, rtol=1e-3, atol=1e-3)
        elif np.isnan(logits).any():
            assert np.isnan(got)


@FUZZ
@given(data=st.data())
def test_attention_shapes(queue, data):
    """Random (often mismatched) shapes: a ValueError, or the right answer."""
    lead = data.draw(st.sampled_from([(), (2,), (2, 2)]))
    Sq, Sk, Sv, d, dk, dv = (data.draw(st.integers(1, 4)) for _ in range(6))
    q = array(data.draw, (*lead, Sq, d), special=False, dtype=np.float32)
    k = array(data.draw, (*lead, Sk, dk), special=False, dtype=np.float32)
    v = array(data.draw, (*lead, Sv, dv), special=False, dtype=np.float32)
    q, k, v = q / 100, k / 100, v / 100
    causal = data.draw(st.booleans())
    for op in (F.attention_naive, F.scaled_dot_product_attention):
        got = run(queue, lambda *t: op(*t, causal=causal), q, k, v)
        if d != dk or Sk != Sv:
            assert got is None
            continue
        want = ref.scaled_dot_product_attention(q, k, v, causal=causal)
        same(got, want, atol=1e-3)


@FUZZ
@given(data=st.data())
def test_naive_attention_propagates_nan(queue, data):
    S, d = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    q, k, v = (array(data.draw, (S, d), dtype=np.float32) for _ in range(3))
    got = run(queue, lambda *t: F.attention_naive(*t, causal=False), q, k, v)
    with np.errstate(all="ignore"):
        logits = (q.astype(np.float64)[:, None, :] * k[None, :, :]).sum(-1)
        want_a = ieee_softmax(logits / np.sqrt(d))
        want = (want_a[:, :, None] * v.astype(np.float64)[None]).sum(axis=1)
    same(got, want, rtol=1e-3, atol=1e-2)


@FUZZ
@given(array=hnp.arrays(st.sampled_from([np.float64, np.int64, np.uint8,
                                         np.bool_, np.complex64]),
                        shapes, elements=None))
def test_from_host(queue, array):
    try:
        t = Tensor.from_host(queue, array)
    except ValueError:
        finite = np.isfinite(array) if array.dtype.kind == "f" else True
        too_big = array.dtype.kind == "f" and np.any(
            finite & (np.abs(array) > np.finfo(np.float32).max))
        too_wide = array.dtype.kind in "iu" and array.size and (
            array.min() < -2**31 or array.max() >= 2**31)
        assert array.dtype.kind in "bc" or too_big or too_wide
        return
    want = array.astype(t.dtype)
    np.testing.assert_array_equal(t.to_host(), want)


@pytest.fixture(scope="module")
def tok():
    t = BPETokenizer()
    t.train_from_iterator(["hello world, hello there; héllo wörld"], vocab_size=280)
    t.register_special_tokens({"<|end|>": 300})
    return t


@FUZZ
@given(text=st.text(max_size=50))
def test_encode_decode(tok, text):
    try:
        ids = tok.encode(text, allowed_special="all")
    except ValueError as err:
        assert "lone surrogate" in str(err)
        return
    assert tok.decode(ids) == text


@FUZZ
@given(ids=st.lists(st.one_of(st.integers(-5, 400), st.floats(), st.booleans(),
                              st.none()), max_size=10))
def test_decode_anything(tok, ids):
    try:
        out = tok.decode(ids)
    except TypeError:
        assert any(type(i) is not int for i in ids)
        return
    except ValueError as err:
        assert "unknown token id" in str(err)
        return
    assert isinstance(out, str) and all(type(i) is int for i in ids)
