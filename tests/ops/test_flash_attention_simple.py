"""The plain flash-attention kernel (kernels/flash_attention_simple.cl):
against numpy (forward, gradients, finite differences) and against the fast
kernel, the rung above it."""

import numpy as np
import pytest

import netcl_lite.functional as F
from gradcheck import run_op
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from test_flash_attention import (SHAPES, check_flash, fast, gqa_sdpa,
                                  gqa_sdpa_vjp, make)


def simple(q, k, v, causal=True):
    return F.flash_attention(q, k, v, causal=causal, kernel="simple")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [True, False])
def test_simple_gradcheck(queue, rng, shape, causal):
    check_flash(queue, *make(rng, *shape), causal, op=simple)


@pytest.mark.parametrize("causal", [True, False])
def test_simple_matches_the_fast_kernel(queue, rng, causal):
    q, k, v = make(rng, (2,), 4, 2, 70, 90, 32, 24)   # GQA, Sq < Sk, 2 blocks
    g = rng.standard_normal((2, 4, 70, 24))
    plain = run_op(queue, lambda a, b, c: simple(a, b, c, causal), [q, k, v], g)
    tiled = run_op(queue, lambda a, b, c: fast(a, b, c, causal), [q, k, v], g)
    np.testing.assert_allclose(plain[0], tiled[0], rtol=1e-5, atol=2e-6)
    for got, want in zip(plain[1], tiled[1]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    want = gqa_sdpa_vjp(q, k, v, g, causal)
    np.testing.assert_allclose(plain[0], gqa_sdpa(q, k, v, causal), rtol=1e-5,
                               atol=2e-6)
    for got, ref in zip(plain[1], want):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_simple_runs_only_its_own_kernels(queue, rng):
    q, k, v = (Tensor.from_host(queue, x) for x in make(rng, (1,), 2, 1, 5, 5, 4, 4))
    with trace() as ran:
        out = F.flash_attention_simple(q, k, v)
    assert ran == ["flash_attention_simple.cl:flash_attention_simple_forward"]
    assert out.op == "flash_attention_simple"
    assert sum(ran.allocations) == 4 * (2 * 5 * 4 + 2 * 5)   # out and lse only


def test_simple_takes_any_head_dim(queue, rng):
    q, k, v = make(rng, (), 1, 1, 6, 6, 300, 5)        # d > 256: no fast kernel
    got, _ = run_op(queue, simple, [q, k, v])
    np.testing.assert_allclose(got, gqa_sdpa(q, k, v, True), rtol=1e-5, atol=2e-6)


def test_simple_fully_masked_rows_are_zero(queue, rng):
    q, k, v = make(rng, (), 1, 1, 8, 3, 4, 4)          # rows 0..4 see nothing
    out, grads = run_op(queue, simple, [q, k, v], rng.standard_normal((1, 8, 4)))
    assert np.array_equal(out[0, :5], np.zeros((5, 4)))
    assert all(np.isfinite(g).all() for g in grads)


def test_simple_errors_come_from_the_one_validator(queue):
    def t(*shape):
        return Tensor.from_host(queue, np.zeros(shape, np.float32))

    with pytest.raises(ValueError, match=r"flash_attention_simple: query heads "
                                         r"H=3 .* HKV=2"):
        F.flash_attention_simple(t(1, 3, 4, 8), t(1, 2, 4, 8), t(1, 2, 4, 8))
    with pytest.raises(ValueError, match=r"lengths differ, Sk=4 vs Sk=5"):
        simple(t(1, 2, 4, 8), t(1, 2, 4, 8), t(1, 2, 5, 8))
