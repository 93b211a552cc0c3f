"""The options chapters 11 and 12 need: a position scale in ``F.rope`` and a
score scale in the attention ops, each against numpy and finite differences.
The defaults (scale=1 for RoPE, 1/sqrt(d) for attention) are the other tests'."""

import functools

import numpy as np
import pytest

import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor


@pytest.mark.parametrize("shape,base,offset,scale", [
    ((37, 6), 10000.0, 0, 0.25),       # position interpolation by 4
    ((2, 3, 5, 10), 500.0, 7, 0.5),    # another base, an offset
    ((3, 1, 64), 43_000.0, 100, 1.0),  # a rescaled ("NTK-aware") base
    ((2, 9, 8), 10000.0, 3, 0.0),      # scale 0: no rotation at all
])
def test_rope_scale_gradcheck(queue, rng, shape, base, offset, scale):
    kw = dict(base=base, offset=offset, scale=scale)
    check_op(queue, lambda x: F.rope(x, **kw), functools.partial(ref.rope, **kw),
             lambda x, g: ref.rope_vjp(x, g, **kw), [rng.standard_normal(shape)])


def test_rope_scale_is_a_position_scale(queue, rng):
    """Scale 1/4 at position 4j turns exactly as plain RoPE at position j."""
    x = rng.standard_normal((32, 16))                         # (S, d)
    quarter = F.rope(Tensor.from_host(queue, x), scale=0.25).value.to_host()
    plain = F.rope(Tensor.from_host(queue, x[::4])).value.to_host()  # j = 0..7
    np.testing.assert_allclose(quarter[::4], plain, atol=1e-6)
    none = F.rope(Tensor.from_host(queue, x), scale=0.0).value.to_host()
    np.testing.assert_array_equal(none, x.astype(np.float32))  # identity


def test_rope_scale_errors(queue):
    x = Tensor.from_host(queue, np.ones((3, 4)))
    for bad in (-1.0, float("nan"), float("inf"), True, "1"):
        with trace() as ran, pytest.raises(ValueError, match="scale"):
            F.rope(x, scale=bad)
        assert ran == []                    # before any kernel runs


SHAPES = [  # (lead, Sq, Sk, d, dv)
    ((), 3, 3, 2, 2),
    ((2, 3), 7, 7, 13, 6),
    ((2,), 37, 37, 16, 16),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scale", [1.0, 0.05])
@pytest.mark.parametrize("causal", [True, False])
def test_attention_scale_gradcheck(queue, rng, shape, scale, causal):
    lead, sq, sk, d, dv = shape
    q, k = rng.standard_normal((*lead, sq, d)), rng.standard_normal((*lead, sk, d))
    v = rng.standard_normal((*lead, sk, dv))
    check_op(queue, lambda a, b: F.attention_weights(a, b, causal, scale=scale),
             lambda a, b: ref.attention_weights(a, b, causal, scale),
             lambda a, b, g: ref.attention_weights_vjp(a, b, g, causal, scale),
             [q, k])
    for op in (F.attention_naive, F.flash_attention,
               F.scaled_dot_product_attention):
        check_op(queue, lambda a, b, c: op(a, b, c, causal, scale=scale),
                 lambda a, b, c: ref.scaled_dot_product_attention(
                     a, b, c, causal, scale),
                 lambda a, b, c, g: ref.scaled_dot_product_attention_vjp(
                     a, b, c, g, causal, scale), [q, k, v])


def test_fused_kernel_takes_the_scale_with_gqa(queue, rng):
    """Two query heads per kv head, scale 1: the fused kernel == numpy."""
    q = rng.standard_normal((2, 4, 9, 8))                 # (B, H, S, d_k)
    k, v = (rng.standard_normal((2, 2, 9, 8)) for _ in range(2))   # HKV = 2
    rep = lambda x: np.repeat(x, 2, axis=1)              # noqa: E731
    want = ref.scaled_dot_product_attention(q, rep(k), rep(v), True, 1.0)
    got = F.flash_attention(*(Tensor.from_host(queue, a) for a in (q, k, v)),
                            scale=1.0).value.to_host()
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)


def test_default_scale_is_one_over_sqrt_d(queue, rng):
    q, k, v = (Tensor.from_host(queue, rng.standard_normal((5, 8)))
               for _ in range(3))
    default = F.flash_attention(q, k, v).value.to_host()
    explicit = F.flash_attention(q, k, v, scale=8 ** -0.5).value.to_host()
    np.testing.assert_array_equal(default, explicit)


def test_attention_scale_errors(queue):
    x = Tensor.from_host(queue, np.ones((3, 4)))
    for op in (F.attention_weights, F.flash_attention):
        for bad in (0.0, -1.0, float("nan"), True):
            args = (x, x) if op is F.attention_weights else (x, x, x)
            with trace() as ran, pytest.raises(ValueError, match="scale"):
                op(*args, scale=bad)
            assert ran == []
