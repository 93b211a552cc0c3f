import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.program import build, kernel_source, trace
from netcl_lite.core.tensor import Tensor


def _rope(base, offset):
    return (lambda x: F.rope(x, base=base, offset=offset),
            functools.partial(ref.rope, base=base, offset=offset),
            lambda x, g: ref.rope_vjp(x, g, base=base, offset=offset))


@pytest.mark.parametrize("shape,base,offset", [
    ((1, 2), 10000.0, 0),           # S=1, one pair
    ((37, 6), 10000.0, 0),          # S=37
    ((2, 3, 5, 10), 10000.0, 7),    # B=2, H=3, d not a multiple of 8
    ((2, 1, 37, 14), 500.0, 123),   # another base, an offset
    ((3, 1, 64), 10000.0, 4000),    # large positions
])
def test_rope_gradcheck(queue, rng, shape, base, offset):
    op, fwd, vjp = _rope(base, offset)
    check_op(queue, op, fwd, vjp, [rng.standard_normal(shape)])


def _has_fp64(queue):
    return "cl_khr_fp64" in queue.device.extensions


def _rotated_dot(queue, q, k, offset, rope=F.rope):
    """q at position offset, k at offset + 3: the dot of the rotated rows."""
    x = np.zeros((4, q.size))
    x[0], x[3] = q, k
    out = rope(Tensor.from_host(queue, x), offset=offset)
    out = out.value.to_host() if hasattr(out, "value") else out
    return float(np.dot(out[0].astype(np.float64), out[3].astype(np.float64)))


def test_rope_is_relative(queue, rng):
    """q.k after RoPE depends only on the distance: (0, 3) == (4000, 4003)."""
    if not _has_fp64(queue):
        pytest.skip("device lacks cl_khr_fp64: rope uses float32 angles")
    q, k = rng.standard_normal(64), rng.standard_normal(64)
    near = _rotated_dot(queue, q, k, 0)
    exact = float(ref.rope(np.stack([q, 0 * q, 0 * q, k]))[[0, 3]].prod(0).sum())
    for offset in (4000, 100_000):
        far = _rotated_dot(queue, q, k, offset)
        diff = abs(far - near)
        print(f"offset {offset}: q.k {far:.7f} vs {near:.7f}, |diff| {diff:.2e}")
        assert np.isclose(far, near, rtol=1e-5, atol=0), (offset, diff)
    assert np.isclose(near, exact, rtol=1e-5, atol=0)


def _float_angle_rope(queue):
    """rope with the kernel built by -D ROPE_FLOAT_ANGLES (the no-fp64 path)."""
    prg = build(queue.context, kernel_source("rope"),
                ["-D", "ROPE_FLOAT_ANGLES"])
    table_k, fwd_k = prg.rope_table, prg.rope_forward

    def rope(x, offset):
        S, d = x.shape
        table = Tensor.empty(queue, (S, d // 2, 2))
        out = Tensor.empty(queue, x.shape)
        n = -(-S * d // 2 // 64) * 64             # pairs, rounded up to 64
        table_k(queue, (n,), (64,), table.buffer, np.int32(S),
                np.int32(d // 2), np.int32(offset), np.float32(10000.0),
                np.float32(0.0), np.float32(1.0))
        fwd_k(queue, (n,), (64,), x.buffer, table.buffer, out.buffer,
              np.int32(S), np.int32(S), np.int32(d // 2))
        return out.to_host()

    return rope


def test_rope_float32_angles_drift(queue, rng):
    """Chapter 06's point: float32 angles drift with the position."""
    q, k = rng.standard_normal(64), rng.standard_normal(64)
    rope32 = _float_angle_rope(queue)
    near = _rotated_dot(queue, q, k, 0, rope32)
    far = _rotated_dot(queue, q, k, 100_000, rope32)
    exact = _rotated_dot(queue, q, k, 0)
    print(f"float32 angles: q.k at 0 {near:.7f}, at 100000 {far:.7f}")
    assert np.isclose(near, exact, rtol=1e-5)      # small positions: fine
    assert abs(far - near) > 1e-4 * abs(near)       # large ones: not


def test_rope_backward_is_inverse_and_norms_kept(queue, rng):
    x = rng.standard_normal((2, 3, 37, 10)).astype(np.float32)
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        out = F.rope(xn, offset=11)
    y = out.value.to_host()
    tape.backward(out, grad=out.value)       # backward of rope(x) is R^-1 rope(x)
    np.testing.assert_allclose(xn.grad.to_host(), x, rtol=1e-5, atol=1e-5)
    pair_norm = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    np.testing.assert_allclose(pair_norm(y), pair_norm(x), rtol=1e-5, atol=1e-6)


def test_rope_errors(queue):
    x = Tensor.from_host(queue, np.zeros((2, 3, 5)))
    with trace() as ran, pytest.raises(ValueError, match="d=5"):
        F.rope(x)
    assert ran == []
    y = Tensor.from_host(queue, np.zeros((3, 4)))
    with pytest.raises(ValueError, match="offset=-1"):
        F.rope(y, offset=-1)
    with pytest.raises(ValueError, match="base"):
        F.rope(y, base=0.0)
    with pytest.raises(ValueError, match="at least 2 dims"):
        F.rope(Tensor.from_host(queue, np.zeros(4)))


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(st.integers(1, 3), max_size=2), S=st.integers(1, 40),
       pairs=st.integers(1, 13), offset=st.integers(0, 5000),
       seed=st.integers(0, 2**16))
def test_rope_property(queue, lead, S, pairs, offset, seed):
    x = np.random.default_rng(seed).standard_normal((*lead, S, 2 * pairs))
    with ag.Tape() as tape:
        xn = ag.tensor(Tensor.from_host(queue, x))
        out = F.rope(xn, offset=offset)
    tape.backward(out, grad=out.value)
    np.testing.assert_allclose(out.value.to_host(), ref.rope(x, offset=offset),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xn.grad.to_host(), x, rtol=1e-4, atol=1e-5)


def test_rope_tables_are_kept_and_bounded(queue):
    """Every layer's q and k turn by the same angles: one table, computed
    once; a decoding loop asks for a new one per token, and only the last
    TABLES_KEPT stay."""
    import importlib
    rope_module = importlib.import_module("netcl_lite.functional.rope")
    from netcl_lite.core.program import trace
    first = rope_module.rope_table(queue, 7, 4, 10000.0, 3)
    with trace() as ran:
        again = rope_module.rope_table(queue, 7, 4, 10000.0, 3)
    assert again is first and ran == []
    assert rope_module.rope_table(queue, 7, 4, 10000.0, 4) is not first
    for offset in range(rope_module.TABLES_KEPT + 5):
        rope_module.rope_table(queue, 1, 4, 10000.0, 100 + offset)
    assert len(rope_module.tables_of(queue)) == rope_module.TABLES_KEPT
