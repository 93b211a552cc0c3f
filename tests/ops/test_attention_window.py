"""Sliding-window attention, ``window=W``: query i sees the keys
p - W < j <= p, p = i + (Sk - Sq) its own position. Every rung that
F.scaled_dot_product_attention runs (the fast kernel, the plain kernel, the
composed path, a decoding step's few rows) against the numpy reference
(tests/numpy_ref/attention.py), with finite differences, and the fused
kernels' promise: a block of keys outside every row's window is never read.
"""

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op, run_op
from netcl_lite.autograd import nodes
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.core.validate import check_qkv
from netcl_lite.functional.flash_attention import (check_window, fast_attention,
                                                   score_scale)
from tiles import each_tile  # noqa: F401 (a fixture: once per matmul tile)


def repeat(x, n):
    """(..., HKV, S, d) -> (..., HKV * n, S, d): head h <- kv head h // n."""
    return x if n == 1 else np.repeat(x, n, axis=-3)


def n_rep(q, k):
    return 1 if q.shape[:-2] == k.shape[:-2] else q.shape[-3] // k.shape[-3]


def windowed(q, k, v, W):
    n = n_rep(q, k)
    return ref.scaled_dot_product_attention(q, repeat(k, n), repeat(v, n), True,
                                            None, W)


def windowed_vjp(q, k, v, g, W):
    n = n_rep(q, k)
    gq, gk, gv = ref.scaled_dot_product_attention_vjp(
        q, repeat(k, n), repeat(v, n), g, True, None, W)
    if n > 1:                        # the repeated heads' gradients, summed
        gk = gk.reshape(*k.shape[:-2], n, *k.shape[-2:]).sum(-3)
        gv = gv.reshape(*v.shape[:-2], n, *v.shape[-2:]).sum(-3)
    return [gq, gk, gv]


def fast(q, k, v, window=None):
    """The fast kernel (flash_attention.cl) whatever the device."""
    q, k, v = nodes(q, k, v, dtype=None, op="flash_attention")
    batch, H, HKV = check_qkv("flash_attention", q, k, v)
    return fast_attention(q, k, v, True, batch, H, HKV, score_scale(q.shape[-1]),
                          check_window(window, True, k.shape[-2]))


RUNGS = {   # name: attention(q, k, v, window)
    "fast": fast,
    "simple": lambda q, k, v, window: F.flash_attention(
        q, k, v, kernel="simple", window=window),
    "naive": lambda q, k, v, window: F.attention_naive(q, k, v, window=window),
    "sdpa": lambda q, k, v, window: F.scaled_dot_product_attention(
        q, k, v, window=window),
}

SHAPES = [  # (lead, H, HKV, Sq, Sk, d, dv, W); H = 0: no head dim
    ((), 0, 0, 1, 1, 1, 1, 1),           # one row
    ((), 0, 0, 37, 37, 5, 3, 1),         # W = 1: each row sees only itself
    ((2,), 3, 3, 7, 7, 13, 6, 3),        # B > 1, H > 1
    ((2,), 4, 2, 40, 40, 8, 8, 16),      # GQA, a window of one panel
    ((1,), 3, 1, 5, 11, 3, 4, 4),        # GQA, Sq < Sk (new rows after a cache)
    ((), 2, 2, 6, 4, 3, 5, 2),           # Sq > Sk: the first rows see nothing
    ((), 1, 1, 150, 150, 17, 33, 20),    # blocks before the window skipped
    ((), 1, 1, 150, 150, 16, 16, 65),    # a window wider than one block
]


def make(rng, lead, H, HKV, sq, sk, d, dv):
    hq, hkv = ((H,), (HKV,)) if H else ((), ())
    return (rng.standard_normal((*lead, *hq, sq, d)),
            rng.standard_normal((*lead, *hkv, sk, d)),
            rng.standard_normal((*lead, *hkv, sk, dv)))


@pytest.mark.parametrize("rung", list(RUNGS))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s[1:])))
def test_window_gradcheck(queue, rng, rung, shape):
    """Forward and gradients against numpy; both against central differences."""
    *sizes, W = shape
    q, k, v = make(rng, *sizes)
    if rung == "naive" and n_rep(q, k) > 1:
        pytest.skip("the composed path takes one kv head per query head")
    attend = RUNGS[rung]
    check_op(queue, lambda a, b, c: attend(a, b, c, W),
             lambda a, b, c: windowed(a, b, c, W),
             lambda a, b, c, g: windowed_vjp(a, b, c, g, W), [q, k, v])


def test_small_window_kernels(queue, rng):
    """The fast and plain kernels, forward and backward, one small GQA case
    with the window's both edges inside blocks (the Oclgrind subset's)."""
    q, k, v = make(rng, (1,), 2, 1, 20, 23, 4, 3)
    g = rng.standard_normal((1, 2, 20, 3))
    want = [windowed(q, k, v, 5), *windowed_vjp(q, k, v, g, 5)]
    for rung in ("fast", "simple"):
        out, grads = run_op(queue, lambda a, b, c: RUNGS[rung](a, b, c, 5),
                            [q, k, v], g)
        for got, w in zip([out, *grads], want):
            np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5)


def test_a_decoding_step_runs_the_plain_kernel_with_the_window(queue, rng):
    """Row 1 of the table: 2 new rows against 50 cached keys."""
    q, k, v = make(rng, (1,), 4, 2, 2, 50, 8, 8)
    with trace() as ran:
        check_op(queue, lambda a, b, c: F.scaled_dot_product_attention(
                     a, b, c, window=8),
                 lambda a, b, c: windowed(a, b, c, 8),
                 lambda a, b, c, g: windowed_vjp(a, b, c, g, 8), [q, k, v])
    assert "flash_attention_simple.cl:flash_attention_simple_forward" in ran


def test_long_head_dims_take_the_composed_path_under_every_tile(queue, rng,
                                                                each_tile):
    """Row 2 (d > 256): scores, scale, the window's bias, softmax, matmul; its
    products are big enough for the tiled matmul, so every tile runs it."""
    q, k, v = make(rng, (1,), 4, 2, 60, 60, 264, 264)
    g = rng.standard_normal((1, 4, 60, 264))
    with trace() as ran:
        out, grads = run_op(queue, lambda a, b, c: F.scaled_dot_product_attention(
            a, b, c, window=9), [q, k, v], g)
    assert "softmax.cl:softmax_forward" in ran
    np.testing.assert_allclose(out, windowed(q, k, v, 9), rtol=1e-4, atol=1e-5)
    for got, want in zip(grads, windowed_vjp(q, k, v, g, 9)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rung", list(RUNGS))
def test_a_window_of_sk_keys_or_more_is_plain_causal(queue, rng, rung):
    q, k, v = make(rng, (1,), 2, 2, 30, 30, 8, 8)
    g = rng.standard_normal((1, 2, 30, 8))
    plain = run_op(queue, lambda a, b, c: RUNGS[rung](a, b, c, None), [q, k, v], g)
    for W in (30, 31, 10**12):
        wide = run_op(queue, lambda a, b, c: RUNGS[rung](a, b, c, W), [q, k, v], g)
        for got, want in zip([wide[0], *wide[1]], [plain[0], *plain[1]]):
            np.testing.assert_array_equal(got, want)


def test_fast_kernel_matches_the_plain_one_on_long_rows(queue, rng):
    """The ladder: many blocks, d = 64, a window that ends inside a block."""
    q, k, v = make(rng, (1,), 4, 2, 300, 300, 64, 64)
    g = rng.standard_normal((1, 4, 300, 64))
    got = run_op(queue, lambda a, b, c: RUNGS["fast"](a, b, c, 100), [q, k, v], g)
    want = run_op(queue, lambda a, b, c: RUNGS["simple"](a, b, c, 100), [q, k, v], g)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=2e-6)
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[0], windowed(q, k, v, 100), atol=1e-5)


@pytest.mark.parametrize("rung", ["fast", "simple"])
def test_keys_outside_every_window_are_never_read(queue, rng, rung):
    """NaN in keys and values that no row's blocks reach, and in queries and
    output gradients that no key's blocks reach: the results they cannot
    touch stay finite and right. A kernel that read a masked block would
    carry the NaN through (0 * NaN = NaN in P V), so this checks the skip.

    S = 256, W = 16: rows from 72 on start their blocks at key 32 or later
    (the fast kernel's work-items hold 6 or 12 rows, and begin at the panel
    of their first row's oldest key), so keys 0..31 are poisoned; keys up
    to 150 are seen by queries before 180 only, so queries 200.. are."""
    S, W = 256, 16
    q, k, v = make(rng, (1,), 2, 2, S, S, 16, 16)
    g = rng.standard_normal((1, 2, S, 16))
    kn, vn = k.copy(), v.copy()
    kn[..., :32, :] = vn[..., :32, :] = np.nan
    qn, gn = q.copy(), g.copy()
    qn[..., 200:, :] = gn[..., 200:, :] = np.nan
    out, (gq, _, _) = run_op(queue, lambda a, b, c: RUNGS[rung](a, b, c, W),
                             [q, kn, vn], g)
    want = windowed(q, k, v, W)
    gq_want = windowed_vjp(q, k, v, g, W)[0]
    np.testing.assert_allclose(out[..., 72:, :], want[..., 72:, :], atol=1e-5)
    np.testing.assert_allclose(gq[..., 72:, :], gq_want[..., 72:, :], atol=1e-4)
    _, (_, gk, gv) = run_op(queue, lambda a, b, c: RUNGS[rung](a, b, c, W),
                            [qn, k, v], gn)
    gk_want, gv_want = windowed_vjp(q, k, v, g, W)[1:]
    np.testing.assert_allclose(gk[..., :150, :], gk_want[..., :150, :], atol=1e-4)
    np.testing.assert_allclose(gv[..., :150, :], gv_want[..., :150, :], atol=1e-4)


@pytest.mark.parametrize("window,match", [
    (0, r"window must be None or a positive int, got 0"),
    (-3, r"got -3"),
    (2.5, r"got 2.5"),
    (True, r"got True"),
    ("4", r"got '4'"),
])
@pytest.mark.parametrize("op", [F.scaled_dot_product_attention, F.flash_attention,
                                F.flash_attention_simple, F.attention_naive,
                                F.attention_weights])
def test_bad_windows_fail_before_any_kernel(queue, op, window, match):
    x = Tensor.from_host(queue, np.zeros((2, 3, 4)))
    args = (x, x) if op is F.attention_weights else (x, x, x)
    with trace() as ran:
        with pytest.raises(ValueError, match=match):
            op(*args, window=window)
    assert ran == []


def test_a_window_needs_causal(queue):
    x = Tensor.from_host(queue, np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: "
                                         r"window=2 needs causal=True"):
        F.scaled_dot_product_attention(x, x, x, causal=False, window=2)


def test_the_window_hides_old_keys_from_the_weights(queue, rng):
    q, k, _ = make(rng, (), 0, 0, 9, 9, 4, 4)
    with ag.Tape():
        A = F.attention_weights(Tensor.from_host(queue, q),
                                Tensor.from_host(queue, k), window=3)
    A = A.value.to_host()
    i, j = np.indices(A.shape)
    assert (A[(j > i) | (j <= i - 3)] == 0).all()
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(A, ref.attention_weights(q, k, True, None, 3),
                               atol=1e-6)
