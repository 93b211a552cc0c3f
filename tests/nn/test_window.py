"""Sliding-window attention in the modules: RotaryAttention(window=W),
DecoderConfig(window=W) through DecoderLM, the KV-cache and the fused
decoder (tests/nn/test_decode.py steps it too), and checkpoints."""

import json

import numpy as np
import pytest

import netcl_lite.autograd as ag
from gradcheck import check_op
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import (DecoderConfig, DecoderLM, FusedDecoder, KVCache,
                           RotaryAttention, load_checkpoint, save_checkpoint)
from numpy_ref.decoder import decoder_lm, rotary_attention, rotary_attention_vjp
from numpy_ref.layers import cross_entropy


def weights(module):
    return [module.__dict__[n].value.to_host().astype(np.float64)
            for n in ("wq", "wk", "wv", "wo")]


@pytest.mark.parametrize("H,HKV,S,W", [(4, 2, 9, 3), (2, 1, 20, 1), (3, 3, 7, 7)])
def test_windowed_rotary_attention_against_numpy(queue, rng, H, HKV, S, W):
    """Forward, d/dx and finite differences (check_op), the head mask too."""
    attn = RotaryAttention(queue, 4 * H, H, HKV, max_seq_len=32, seed=1, window=W)
    w = weights(attn)
    x = rng.standard_normal((2, S, 4 * H))
    mask = rng.uniform(0.0, 1.5, size=H)
    check_op(queue, lambda a, m: attn(a, head_mask=m),
             lambda a, m: rotary_attention(a, *w, H, HKV, head_mask=m, window=W),
             lambda a, m, g: rotary_attention_vjp(a, *w, H, HKV, g, head_mask=m,
                                                  window=W),
             [x, mask])


def test_the_attention_map_has_the_window(queue, rng):
    attn = RotaryAttention(queue, 8, 2, 1, max_seq_len=16, window=4)
    A = attn.attention_map(Tensor.from_host(queue, rng.standard_normal((1, 10, 8))))
    A = A.value.to_host()[0]                                   # (H, S, S)
    i, j = np.indices(A.shape[1:])
    assert (A[:, (j > i) | (j <= i - 4)] == 0).all()
    assert (A[:, (j <= i) & (j > i - 4)] > 0).all()


def model_of(queue, **overrides):
    cfg = dict(vocab_size=32, dim=16, n_layers=2, n_heads=4, n_kv_heads=2,
               max_seq_len=24, hidden_dim=24, seed=5, window=5)
    cfg.update(overrides)
    return DecoderLM(queue, DecoderConfig(**cfg))


def host_params(model):
    return {n: p.value.to_host().astype(np.float64)
            for n, p in model.named_parameters()}


def test_decoder_lm_with_a_window_matches_numpy(queue, rng):
    model = model_of(queue)
    ids = rng.integers(0, 32, size=(2, 20))
    got = model(ids).value.to_host()
    want = decoder_lm(ids, host_params(model), 2, 4, 2, window=5)
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)
    plain = decoder_lm(ids, host_params(model), 2, 4, 2)
    # the first 5 positions see the same keys either way; later ones do not
    np.testing.assert_allclose(got[:, :5], plain[:, :5], atol=1e-4, rtol=1e-4)
    assert np.abs(got[:, 5:] - plain[:, 5:]).max() > 1e-2


def test_the_kv_cache_path_equals_the_full_forward(queue, rng):
    """A prompt of 7 then one token at a time to 20, through the layers with
    a KVCache (the fused decoder off): each step's logits are the full
    forward's at that position, with W = 5 < 20."""
    model = model_of(queue)
    ids = rng.integers(0, 32, size=(2, 20)).astype(np.int32)
    full = model(ids).value.to_host()                          # (B, S, V)
    cache = KVCache(2)
    first = model(ids[:, :7], cache).value.to_host()
    np.testing.assert_allclose(first, full[:, :7], atol=1e-5, rtol=1e-5)
    for t in range(7, 20):
        step = model(ids[:, t:t + 1], cache).value.to_host()[:, 0]
        np.testing.assert_allclose(step, full[:, t], atol=1e-5, rtol=1e-5)
    assert cache.length == 20


def test_the_fused_decoder_equals_the_full_forward(queue, rng):
    model = model_of(queue, window=3)
    ids = rng.integers(0, 32, size=(1, 24)).astype(np.int32)
    full = model(ids).value.to_host()
    cache = KVCache(2)
    model(ids[:, :4], cache)
    decoder = FusedDecoder(model, 1)
    decoder.start(cache)
    for t in range(4, 24):
        np.testing.assert_allclose(decoder.step(ids[:, t]), full[:, t],
                                   atol=1e-5, rtol=1e-5)
    greedy = model.generate(ids[0, :4], 12, temperature=0.0)
    again = model.generate(ids[0, :4], 12, temperature=0.0, use_cache=False)
    assert greedy == again


def test_checkpoints_keep_the_window_and_old_ones_load(queue, tmp_path):
    model = model_of(queue, window=6)
    save_checkpoint(tmp_path / "c", model)
    again, _ = load_checkpoint(tmp_path / "c", queue)
    assert again.config.window == 6 and again.blocks[1].attn.window == 6
    ids = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]])
    np.testing.assert_array_equal(again(ids).value.to_host(),
                                  model(ids).value.to_host())
    # a checkpoint written before the window existed: no "window" key
    meta = tmp_path / "c.json"
    header = json.loads(meta.read_text())
    del header["config"]["window"]
    meta.write_text(json.dumps(header))
    old, _ = load_checkpoint(tmp_path / "c", queue)
    assert old.config.window == 0 and old.blocks[0].attn.window is None


@pytest.mark.parametrize("value,match", [
    (-1, r"window must be >= 0 \(0: none\), got -1"),
    (2.5, r"window must be int, got 2.5"),
    (True, r"window must be int, got True"),
])
def test_bad_config_windows(value, match):
    with pytest.raises(ValueError, match=match):
        DecoderConfig(vocab_size=8, window=value)


def test_a_module_window_is_checked(queue):
    with pytest.raises(ValueError, match=r"RotaryAttention: window must be None "
                                         r"or a positive int, got 0"):
        RotaryAttention(queue, 8, 2, 2, 8, window=0)
    with pytest.raises(ValueError, match=r"window=2 needs causal=True"):
        RotaryAttention(queue, 8, 2, 2, 8, causal=False, window=2)


def test_loss_gradients_with_a_window_match_numpy(queue, rng):
    """d loss / d W along a random direction, for three weights, against
    float64 central differences of the numpy model's loss."""
    model = model_of(queue)
    p = host_params(model)
    ids = rng.integers(0, 32, size=(2, 16))
    targets = rng.integers(0, 32, size=(2, 16))
    with ag.Tape() as tape:
        loss = model.loss(ids, targets)
    model.zero_grad()
    tape.backward(loss)
    grads = {n: w.grad.to_host() for n, w in model.named_parameters()}
    for name in ("blocks.0.attn.wq", "blocks.1.attn.wv", "tok_emb.weight"):
        v = rng.standard_normal(p[name].shape)

        def f(h):
            shifted = dict(p, **{name: p[name] + h * v})
            return float(cross_entropy(decoder_lm(ids, shifted, 2, 4, 2,
                                                  window=5), targets))

        fd = (f(1e-6) - f(-1e-6)) / 2e-6
        assert abs(np.sum(grads[name] * v) - fd) < 1e-3 * max(1.0, abs(fd)), name
