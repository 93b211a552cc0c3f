"""Head masks: head h's output times head_mask[h] before W_O, in the
attention modules and through DecoderLM's forward and loss, against the
numpy reference (tests/numpy_ref/decoder.py) and finite differences."""

import math

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from gradcheck import check_op
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import DecoderConfig, DecoderLM, MultiHeadAttention, RotaryAttention
from numpy_ref.decoder import decoder_lm, rotary_attention, rotary_attention_vjp
from numpy_ref.layers import cross_entropy


def weights(module):
    return [module.__dict__[n].value.to_host().astype(np.float64)
            for n in ("wq", "wk", "wv", "wo")]


@pytest.mark.parametrize("H,HKV,mask", [(4, 2, [1.0, 0.0, 0.5, -2.0]),
                                        (3, 1, [0.0, 0.0, 0.0]),
                                        (2, 2, [1.0, 1.0])])
def test_masked_rotary_attention_matches_numpy(queue, rng, H, HKV, mask):
    attn = RotaryAttention(queue, 4 * H, H, HKV, max_seq_len=16, seed=3)
    x = rng.standard_normal((2, 7, 4 * H))
    got = attn(Tensor.from_host(queue, x), head_mask=mask).value.to_host()
    want = rotary_attention(x, *weights(attn), H, HKV, head_mask=mask)
    np.testing.assert_allclose(got, want, atol=2e-5)


def test_multi_head_attention_takes_the_mask_too(queue, rng):
    mha = MultiHeadAttention(queue, 12, 3, seed=1)
    x = Tensor.from_host(queue, rng.standard_normal((1, 6, 12)))
    full = mha(x).value.to_host()
    parts = [mha(x, head_mask=np.eye(3)[h]).value.to_host() for h in range(3)]
    np.testing.assert_allclose(sum(parts), full, atol=1e-5)
    np.testing.assert_allclose(mha(x, head_mask=[1, 1, 1]).value.to_host(), full,
                               atol=1e-6)


@pytest.mark.parametrize("H,HKV,S", [(4, 2, 6), (2, 1, 1), (3, 3, 9)])
def test_mask_gradients_match_numpy_and_finite_differences(queue, rng, H, HKV, S):
    """check_op: the forward, d/dx and d/dmask against the reference vjp, and
    both against central differences."""
    attn = RotaryAttention(queue, 4 * H, H, HKV, max_seq_len=16, seed=2)
    w = weights(attn)
    x = rng.standard_normal((2, S, 4 * H))
    mask = rng.uniform(-1.0, 2.0, size=H)

    def op(xn, m):
        return attn(xn, head_mask=m)

    check_op(queue, op,
             lambda x, m: rotary_attention(x, *w, H, HKV, head_mask=m),
             lambda x, m, g: rotary_attention_vjp(x, *w, H, HKV, g, head_mask=m),
             [x, mask])


def test_a_list_is_a_constant_and_gradients_still_reach_x(queue, rng):
    attn = RotaryAttention(queue, 8, 2, 1, max_seq_len=8, seed=4)
    x0 = rng.standard_normal((1, 5, 8))
    g = rng.standard_normal((1, 5, 8))
    mask = [0.0, 1.5]
    with ag.Tape() as tape:
        x = ag.tensor(Tensor.from_host(queue, x0))
        loss = F.sum(F.mul(attn(x, head_mask=mask), Tensor.from_host(queue, g)))
    tape.backward(loss)
    want = rotary_attention_vjp(x0, *weights(attn), 2, 1, g, head_mask=mask)[0]
    np.testing.assert_allclose(x.grad.to_host(), want, atol=1e-4)
    # the mask made no leaf: only x and the weights ask for a gradient
    leaves = {id(n) for _, inputs, _ in tape.records for n in inputs
              if n.requires_grad and n.op is None}
    assert leaves == {id(x)} | {id(p) for p in attn.parameters()}


def tiny(queue):
    return DecoderLM(queue, DecoderConfig(vocab_size=32, dim=16, n_layers=2,
                                          n_heads=4, n_kv_heads=2, max_seq_len=12,
                                          hidden_dim=24, seed=0))


def host_params(model):
    return {n: w.value.to_host().astype(np.float64)
            for n, w in model.named_parameters()}


def test_decoder_lm_head_mask_matches_numpy(queue, rng):
    model = tiny(queue)
    ids = rng.integers(0, 32, size=(2, 9))
    masks = {1: [1.0, 0.0, 1.0, 0.25], 0: [0.0, 1.0, 1.0, 1.0]}
    want = decoder_lm(ids, host_params(model), 2, 4, 2, head_mask=masks)
    got = model(ids, head_mask=masks).value.to_host()
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)
    plain = model(ids).value.to_host()
    ones = model(ids, head_mask={0: [1.0] * 4}).value.to_host()
    np.testing.assert_allclose(ones, plain, atol=1e-6)
    assert np.abs(got - plain).max() > 1e-2        # the mask changed something


def test_decoder_lm_loss_gradient_to_the_mask(queue, rng):
    """d loss / d mask[h] for a (H,) leaf per layer, against float64 central
    differences of the numpy model's loss; the weights' gradients flow too."""
    model = tiny(queue)
    p = host_params(model)
    ids = rng.integers(0, 32, size=(2, 8))
    targets = rng.integers(0, 32, size=(2, 8))
    m0 = {0: rng.uniform(0.0, 1.5, 4), 1: rng.uniform(0.0, 1.5, 4)}
    with ag.Tape() as tape:
        leaves = {i: ag.tensor(Tensor.from_host(queue, m)) for i, m in m0.items()}
        loss = model.loss(ids, targets, head_mask=leaves)
    model.zero_grad()
    tape.backward(loss)
    want = float(cross_entropy(decoder_lm(ids, p, 2, 4, 2, head_mask=m0), targets))
    assert math.isclose(float(loss.value.to_host()), want, rel_tol=1e-4)
    h = 1e-6
    for layer in (0, 1):
        for head in range(4):
            def f(sign):
                m = {i: v.copy() for i, v in m0.items()}
                m[layer][head] += sign * h
                return float(cross_entropy(decoder_lm(ids, p, 2, 4, 2,
                                                      head_mask=m), targets))
            fd = (f(1) - f(-1)) / (2 * h)
            got = float(leaves[layer].grad.to_host()[head])
            assert abs(got - fd) < 1e-3 * max(1.0, abs(fd)), (layer, head, got, fd)
    assert model.blocks[0].attn.wq.grad is not None


@pytest.mark.parametrize("mask,match", [
    ({0: [1.0, 0.0]}, r"head_mask\[0\]: expected 4 floats \(one per head\), "
                      r"got shape \(2,\): \[1.0, 0.0\]"),
    ({1: [1.0, float("nan"), 1.0, 1.0]}, r"head_mask\[1\]: every value must be "
                                         r"finite, got nan"),
    ({0: [1.0, 1.0, float("inf"), 1.0]}, r"finite, got inf"),
    ({2: [1.0] * 4}, r"unknown layer 2; the model's layers are 0..1"),
    ({-1: [1.0] * 4}, r"unknown layer -1"),
    ({"0": [1.0] * 4}, r"unknown layer '0'"),
    ({True: [1.0] * 4}, r"unknown layer True"),
    ([1.0] * 4, r"expected a dict \{layer: H floats\}, got list"),
    ({0: "1111"}, r"head_mask\[0\]: expected 4 floats, got '1111'"),
    ({0: [True, False, True, True]}, r"head_mask\[0\]: expected 4 floats"),
])
def test_bad_head_masks_fail_before_any_kernel(queue, mask, match):
    model = tiny(queue)
    with ag.Tape() as tape:
        with pytest.raises(ValueError, match=match):
            model.loss([[1, 2, 3]], [[2, 3, 4]], head_mask=mask)
    assert tape.records == []


def test_a_mask_node_of_the_wrong_shape_is_named(queue):
    attn = RotaryAttention(queue, 8, 2, 2, max_seq_len=8)
    x = Tensor.from_host(queue, np.zeros((1, 3, 8)))
    bad = ag.tensor(Tensor.from_host(queue, np.ones((2, 1))))
    with pytest.raises(ValueError, match=r"expected 2 floats \(one per head\), "
                                         r"got shape \(2, 1\)"):
        attn(x, head_mask=bad)
