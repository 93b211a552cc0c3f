"""The fused attention kernel (kernels/flash_attention.cl) against numpy and
against the four-kernel path (F.attention_naive), its oracle.

F.flash_attention runs that kernel on a CPU and the simple one on a GPU
(tests/ops/test_attention_device.py); ``fast`` below runs it on any device,
so that Oclgrind, which reports itself as a GPU, still checks it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op, run_op
from netcl_lite.autograd import nodes
from netcl_lite.core.device import device_of
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_qkv
from netcl_lite.functional.flash_attention import (fast_attention, kernel_for,
                                                   score_scale)
from netcl_lite.nn.transformer import RotaryAttention


def repeat(x, n_rep):
    """(..., HKV, S, d) -> (..., HKV * n_rep, S, d): head h <- kv head h // n_rep."""
    return x if n_rep == 1 else np.repeat(x, n_rep, axis=-3)


def n_rep(q, k):
    return 1 if q.shape[:-2] == k.shape[:-2] else q.shape[-3] // k.shape[-3]


def gqa_sdpa(q, k, v, causal):
    n = n_rep(q, k)
    return ref.scaled_dot_product_attention(q, repeat(k, n), repeat(v, n), causal)


def gqa_sdpa_vjp(q, k, v, g, causal):
    """Gradients of the repeated k, v summed back onto their kv head."""
    n = n_rep(q, k)
    gq, gk, gv = ref.scaled_dot_product_attention_vjp(
        q, repeat(k, n), repeat(v, n), g, causal)
    if n > 1:
        gk = gk.reshape(*k.shape[:-2], n, *k.shape[-2:]).sum(-3)
        gv = gv.reshape(*v.shape[:-2], n, *v.shape[-2:]).sum(-3)
    return [gq, gk, gv]


def fast(q, k, v, causal=True):
    """F.flash_attention on the fast kernel whatever the device."""
    q, k, v = nodes(q, k, v, dtype=None, op="flash_attention")
    batch, H, HKV = check_qkv("flash_attention", q, k, v)
    return fast_attention(q, k, v, causal, batch, H, HKV,
                          score_scale(q.shape[-1]))


def forward_kernel(queue):
    """The forward kernel that F.flash_attention runs on this queue's device."""
    if kernel_for(device_of(queue)) == "fast":
        return "flash_attention.cl:flash_attention_forward"
    return "flash_attention_simple.cl:flash_attention_simple_forward"


def check_flash(queue, q, k, v, causal, op=F.flash_attention):
    check_op(queue, lambda a, b, c: op(a, b, c, causal=causal),
             lambda a, b, c: gqa_sdpa(a, b, c, causal),
             lambda a, b, c, g: gqa_sdpa_vjp(a, b, c, g, causal), [q, k, v])


SHAPES = [  # (lead, H, HKV, Sq, Sk, d, dv); H = 0: no head dim
    ((), 0, 0, 1, 1, 1, 1),          # S = 1
    ((), 0, 0, 37, 37, 5, 3),        # S = 37, d not a multiple of 8
    ((2,), 3, 3, 7, 7, 13, 6),       # B > 1, H > 1
    ((2,), 4, 2, 9, 9, 8, 8),        # GQA: two query heads per kv head
    ((1,), 3, 1, 5, 11, 3, 4),       # GQA, Sq < Sk (bottom-right causal)
    ((), 2, 2, 6, 4, 3, 5),          # Sq > Sk: the first rows see nothing
    ((), 1, 1, 70, 70, 17, 33),      # more than one 64-key block
]


def make(rng, lead, H, HKV, sq, sk, d, dv):
    hq, hkv = ((H,), (HKV,)) if H else ((), ())
    return (rng.standard_normal((*lead, *hq, sq, d)),
            rng.standard_normal((*lead, *hkv, sk, d)),
            rng.standard_normal((*lead, *hkv, sk, dv)))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [True, False])
def test_flash_gradcheck(queue, rng, shape, causal):
    check_flash(queue, *make(rng, *shape), causal)


@pytest.mark.parametrize("causal", [True, False])
def test_sdpa_runs_the_fused_kernel(queue, rng, causal):
    q, k, v = make(rng, (2,), 4, 2, 37, 37, 16, 16)
    with trace() as ran:
        check_flash(queue, q, k, v, causal, op=F.scaled_dot_product_attention)
    assert forward_kernel(queue) in ran
    assert "softmax.cl:softmax_forward" not in ran


@pytest.mark.parametrize("causal", [True, False])
def test_fused_matches_the_composed_path(queue, rng, causal):
    q, k, v = make(rng, (2,), 3, 3, 100, 130, 64, 40)
    g = rng.standard_normal((2, 3, 100, 40))
    fused = run_op(queue, lambda a, b, c: F.flash_attention(a, b, c, causal),
                   [q, k, v], g)
    naive = run_op(queue, lambda a, b, c: F.attention_naive(a, b, c, causal),
                   [q, k, v], g)
    np.testing.assert_allclose(fused[0], naive[0], rtol=1e-5, atol=2e-6)
    for got, want in zip(fused[1], naive[1]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_big_blocks_against_numpy(queue, rng):
    """Many 64-key blocks, the causal diagonal inside blocks, d = 64."""
    q, k, v = make(rng, (1,), 4, 2, 300, 300, 64, 64)
    want = gqa_sdpa(q, k, v, True)
    got, _ = run_op(queue, lambda a, b, c: F.flash_attention(a, b, c), [q, k, v])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("causal", [True, False])
def test_twelve_row_work_items(queue, rng, causal):
    """Enough rows (64 heads x 17 work-items) for 12 rows per work-item."""
    q, k, v = make(rng, (2,), 32, 16, 199, 203, 16, 24)
    g = rng.standard_normal((2, 32, 199, 24))
    got, grads = run_op(queue, lambda a, b, c: F.flash_attention(a, b, c, causal),
                        [q, k, v], g)
    np.testing.assert_allclose(got, gqa_sdpa(q, k, v, causal), rtol=1e-5, atol=2e-6)
    for got_g, want_g in zip(grads, gqa_sdpa_vjp(q, k, v, g, causal)):
        np.testing.assert_allclose(got_g, want_g, rtol=1e-4, atol=1e-5)


# fast: the fast kernel also on a GPU, for Oclgrind's checks (tests/oclgrind.txt)
@pytest.mark.parametrize("op", [F.flash_attention, fast], ids=["op", "fast"])
def test_fully_masked_rows_are_zero_with_finite_gradients(queue, rng, op):
    q, k, v = make(rng, (), 1, 1, 8, 3, 4, 4)   # Sq > Sk: rows 0..4 see nothing
    out, grads = run_op(queue, op, [q, k, v],
                        rng.standard_normal((1, 8, 4)))
    assert np.array_equal(out[0, :5], np.zeros((5, 4)))
    assert all(np.isfinite(g).all() for g in grads)
    assert np.array_equal(grads[0][0, :5], np.zeros((5, 4)))


@pytest.mark.parametrize("S", [8, 70])          # one block of keys, and two
def test_nan_propagates_as_in_the_naive_path(queue, rng, S):
    """A NaN key poisons every row that sees it (as in F.attention_naive and
    torch), a NaN query its own row (as in torch); other rows are unchanged."""
    q, k, v = (rng.standard_normal((1, 2, S, 16)).astype(np.float32)
               for _ in range(3))
    k[0, 0, 3, 5] = np.nan                   # head 0: a NaN in key 3
    q[0, 1, 5, 0] = np.nan                   # head 1: a NaN in query row 5
    Q, K, V = (Tensor.from_host(queue, x) for x in (q, k, v))
    fused = F.flash_attention(Q, K, V, causal=True).value.to_host()
    naive = F.attention_naive(Q, K, V, causal=True).value.to_host()
    nan_rows = np.zeros((2, S), bool)
    nan_rows[0, 3:] = True                   # causal: rows 3.. see key 3
    nan_rows[1, 5] = True
    assert np.isnan(fused[0]).any(axis=-1).tolist() == nan_rows.tolist()
    assert np.isnan(fused[0][nan_rows]).all()
    assert np.isnan(naive[0, 0]).any(axis=-1).tolist() == nan_rows[0].tolist()
    np.testing.assert_allclose(fused[0][~nan_rows], naive[0][~nan_rows],
                               rtol=1e-5, atol=2e-6)


def test_nan_keeps_the_zeros_of_rows_that_see_nothing(queue, rng):
    q, k, v = make(rng, (), 1, 1, 8, 3, 4, 4)   # Sq > Sk: rows 0..4 see nothing
    k[0, 1, 2] = np.nan                      # key 1: rows 6 and 7 see it
    Q, K, V = (Tensor.from_host(queue, x) for x in (q, k, v))
    out = F.flash_attention(Q, K, V, causal=True).value.to_host()
    assert np.array_equal(out[0, :5], np.zeros((5, 4)))
    assert np.isnan(out[0, 6:]).all() and np.isfinite(out[0, 5]).all()


def test_deterministic(queue, rng):
    q, k, v = make(rng, (2,), 4, 2, 50, 50, 20, 20)
    g = rng.standard_normal((2, 4, 50, 20))
    first = run_op(queue, F.flash_attention, [q, k, v], g)
    second = run_op(queue, F.flash_attention, [q, k, v], g)
    assert np.array_equal(first[0], second[0])
    assert all(np.array_equal(a, b) for a, b in zip(first[1], second[1]))


def test_wide_heads_fall_back_to_the_naive_path(queue, rng):
    q, k, v = make(rng, (1,), 2, 1, 3, 4, 260, 5)   # d > 256, GQA
    with trace() as ran:
        check_flash(queue, q, k, v, True, op=F.scaled_dot_product_attention)
    assert "flash_attention.cl:flash_attention_forward" not in ran
    with pytest.raises(ValueError, match="d=260.*at most 256"):
        F.flash_attention(*(Tensor.from_host(queue, x) for x in (q, k, v)))


def test_errors_name_the_shapes(queue):
    def t(*shape):
        return Tensor.from_host(queue, np.zeros(shape, np.float32))

    with pytest.raises(ValueError, match=r"H=3 .* HKV=2"):
        F.flash_attention(t(1, 3, 4, 8), t(1, 2, 4, 8), t(1, 2, 4, 8))
    with pytest.raises(ValueError, match=r"H=3 .* HKV=2"):
        F.scaled_dot_product_attention(t(1, 3, 4, 8), t(1, 2, 4, 8), t(1, 2, 4, 8))
    with pytest.raises(ValueError, match=r"leading dims differ.*\(2, 3, 4, 8\)"):
        F.flash_attention(t(2, 3, 4, 8), t(1, 3, 4, 8), t(1, 3, 4, 8))
    with pytest.raises(ValueError, match=r"head dims.*d=8.*d=7"):
        F.flash_attention(t(4, 8), t(4, 7), t(4, 7))
    with pytest.raises(ValueError, match=r"k \(1, 2, 4, 8\) and v \(1, 2, 5, 8\)"):
        F.flash_attention(t(1, 2, 4, 8), t(1, 2, 4, 8), t(1, 2, 5, 8))


def test_rotary_attention_passes_kv_heads_without_copies(queue, rng):
    attn = RotaryAttention(queue, dim=16, n_heads=4, n_kv_heads=2, max_seq_len=8)
    x = Tensor.from_host(queue, rng.standard_normal((2, 5, 16)))
    with ag.Tape() as tape, trace() as ran:
        y = attn(ag.tensor(x))
        loss = F.sum(F.mul(y, y))
    tape.backward(loss)
    assert forward_kernel(queue) in ran
    assert not any(name.startswith("repeat_kv.cl") for name in ran)


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(st.integers(1, 2), max_size=1), hkv=st.integers(1, 2),
       n_rep=st.integers(1, 3), sq=st.integers(1, 20), sk=st.integers(1, 20),
       d=st.integers(1, 12), dv=st.integers(1, 12), causal=st.booleans(),
       seed=st.integers(0, 2**16))
def test_flash_random_shapes(queue, lead, hkv, n_rep, sq, sk, d, dv, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = make(rng, tuple(lead), hkv * n_rep, hkv, sq, sk, d, dv)
    g = rng.standard_normal((*q.shape[:-1], dv))
    got, grads = run_op(queue, lambda a, b, c: F.flash_attention(a, b, c, causal),
                        [q, k, v], g)
    np.testing.assert_allclose(got, gqa_sdpa(q, k, v, causal), rtol=1e-4, atol=1e-5)
    for got_g, want_g in zip(grads, gqa_sdpa_vjp(q, k, v, g, causal)):
        np.testing.assert_allclose(got_g, want_g, rtol=1e-4, atol=1e-4)
