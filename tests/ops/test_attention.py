import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl_lite.functional as F
import numpy_ref as ref
from gradcheck import check_op
from netcl_lite.core.tensor import Tensor
from netcl_lite.functional.attention import scores

# The chapter's worked example (section 3): S = 3, d_k = 2, causal.
Q = [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
K = [[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]]
V = [[10.0, 1.0], [20.0, 2.0], [30.0, 3.0]]


def host(node):
    return node.value.to_host().astype(np.float64)


def test_chapter_worked_example(queue):
    q, k, v = (Tensor.from_host(queue, a) for a in (Q, K, V))
    qk = scores(q, k)
    assert np.array_equal(host(qk), [[1, 1, 0], [0, 2, 4], [1, 2, 2]])
    logits = F.scale(qk, 1 / np.sqrt(2))
    assert np.array_equal(np.round(host(logits), 3), [[0.707, 0.707, 0.0],
                                                      [0.0, 1.414, 2.828],
                                                      [0.707, 1.414, 1.414]])
    A = F.attention_weights(q, k, causal=True)
    assert np.array_equal(np.round(host(A), 3), [[1.0, 0.0, 0.0],
                                                 [0.196, 0.804, 0.0],
                                                 [0.198, 0.401, 0.401]])
    O = F.scaled_dot_product_attention(q, k, v, causal=True)
    assert np.array_equal(np.round(host(O), 2), [[10.00, 1.00],
                                                 [18.04, 1.80],
                                                 [22.03, 2.20]])


def check_weights(queue, q, k, causal):
    check_op(queue, lambda a, b: F.attention_weights(a, b, causal=causal),
             lambda a, b: ref.attention_weights(a, b, causal),
             lambda a, b, g: ref.attention_weights_vjp(a, b, g, causal),
             [q, k])


def check_sdpa(queue, q, k, v, causal):
    check_op(queue,
             lambda a, b, c: F.scaled_dot_product_attention(a, b, c, causal),
             lambda a, b, c: ref.scaled_dot_product_attention(a, b, c, causal),
             lambda a, b, c, g: ref.scaled_dot_product_attention_vjp(
                 a, b, c, g, causal),
             [q, k, v])


SHAPES = [  # (lead, Sq, Sk, d, dv)
    ((), 1, 1, 1, 1),
    ((), 3, 3, 2, 2),
    ((2,), 37, 37, 5, 3),        # S = 37, d not a multiple of 8
    ((2, 3), 7, 7, 13, 6),       # B > 1, H > 1
    ((2, 3), 1, 9, 4, 4),        # one new query row sees all keys
    ((1, 2), 6, 4, 3, 5),        # Sq > Sk: the first rows see nothing
]


@pytest.mark.parametrize("lead,sq,sk,d,dv", SHAPES)
@pytest.mark.parametrize("causal", [True, False])
def test_attention_gradients(queue, rng, lead, sq, sk, d, dv, causal):
    q = rng.standard_normal((*lead, sq, d))
    k = rng.standard_normal((*lead, sk, d))
    v = rng.standard_normal((*lead, sk, dv))
    check_weights(queue, q, k, causal)
    check_sdpa(queue, q, k, v, causal)


def test_scores_gradient(queue, rng):
    q, k = rng.standard_normal((2, 3, 37, 5)), rng.standard_normal((2, 3, 9, 5))
    check_op(queue, scores, lambda a, b: a @ np.swapaxes(b, -1, -2),
             lambda a, b, g: [g @ b, np.swapaxes(g, -1, -2) @ a], [q, k])


def test_no_nan_for_fully_masked_rows(queue, rng):
    q, k, v = (Tensor.from_host(queue, rng.standard_normal(s))
               for s in ((5, 4), (2, 4), (2, 3)))
    out = F.scaled_dot_product_attention(q, k, v).value.to_host()
    assert np.isfinite(out).all()
    assert np.array_equal(out[:3], np.zeros((3, 3)))   # rows 0..2 see nothing


def test_errors_name_the_shapes(queue):
    def t(shape, dtype=np.float32):
        return Tensor.from_host(queue, np.zeros(shape, dtype))

    sdpa = F.scaled_dot_product_attention
    with pytest.raises(ValueError, match=r"leading dims.*\(2, 3, 4\).*\(3, 3, 4\)"):
        F.attention_weights(t((2, 3, 4)), t((3, 3, 4)))
    with pytest.raises(ValueError, match=r"head dims.*d=4.*d=5"):
        F.attention_weights(t((3, 4)), t((3, 5)))
    with pytest.raises(ValueError, match=r"lengths differ.*Sk=3.*Sk=2"):
        sdpa(t((3, 4)), t((3, 4)), t((2, 4)))
    with pytest.raises(ValueError, match=r"leading dims.*\(2, 3, 4\).*\(1, 3, 4\)"):
        sdpa(t((2, 3, 4)), t((2, 3, 4)), t((1, 3, 4)))
    with pytest.raises(ValueError, match=r"k \(3, 4\) has dtype int32"):
        sdpa(t((3, 4)), t((3, 4), np.int32), t((3, 4)))
    with pytest.raises(ValueError, match=r"q must be \(\.\.\., S, d\).*\(4,\)"):
        F.attention_weights(t((4,)), t((3, 4)))


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(st.integers(1, 3), max_size=2), sq=st.integers(1, 8),
       sk=st.integers(1, 8), d=st.integers(1, 9), dv=st.integers(1, 5),
       causal=st.booleans(), seed=st.integers(0, 2**16))
def test_attention_random_shapes(queue, lead, sq, sk, d, dv, causal, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((*lead, sq, d))
    k = rng.standard_normal((*lead, sk, d))
    v = rng.standard_normal((*lead, sk, dv))
    check_sdpa(queue, q, k, v, causal)


def test_attention_inputs_are_validated_once(queue, rng, monkeypatch):
    """One validator (core/validate.check_qkv), called once per public call."""
    import sys

    from netcl_lite.core.validate import check_qkv

    # sys.modules: F.flash_attention, the function, hides the module's name
    attention_module = sys.modules["netcl_lite.functional.attention"]
    flash_module = sys.modules["netcl_lite.functional.flash_attention"]

    calls = []

    def counting(op, *args, **kwargs):
        calls.append(op)
        return check_qkv(op, *args, **kwargs)

    monkeypatch.setattr(attention_module, "check_qkv", counting)
    monkeypatch.setattr(flash_module, "check_qkv", counting)
    q = Tensor.from_host(queue, rng.standard_normal((2, 5, 4)))
    for call, name in [(F.scaled_dot_product_attention,
                        "scaled_dot_product_attention"),
                       (F.attention_naive, "attention_naive"),
                       (F.flash_attention, "flash_attention")]:
        calls.clear()
        call(q, q, q)
        assert calls == [name]
