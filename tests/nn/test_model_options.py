"""DecoderConfig's rope_scale and attn_scale (chapters 11 and 12) against the
numpy decoder; the defaults leave every other test's model unchanged."""

import numpy as np
import pytest

from netcl_lite.nn import DecoderConfig, DecoderLM, KVCache
from numpy_ref.decoder import decoder_lm


def tiny(queue, **overrides):
    cfg = dict(vocab_size=32, dim=16, n_layers=2, n_heads=4, n_kv_heads=2,
               max_seq_len=24, hidden_dim=24, seed=0)
    cfg.update(overrides)
    return DecoderLM(queue, DecoderConfig(**cfg))


def params(model):
    return {n: w.value.to_host().astype(np.float64)
            for n, w in model.named_parameters()}


@pytest.mark.parametrize("options,ref_kw", [
    (dict(rope_scale=0.25), dict(rope_scale=0.25)),             # interpolation
    (dict(rope_base=43_000.0), dict(base=43_000.0)),            # NTK-aware base
    (dict(rope_scale=0.0), dict(rope_scale=0.0)),               # NoPE
    (dict(attn_scale=1.0), dict(scale=1.0)),                    # no 1/sqrt(d_k)
])
def test_options_match_numpy(queue, rng, options, ref_kw):
    model = tiny(queue, **options)
    ids = rng.integers(0, 32, size=(2, 20))
    want = decoder_lm(ids, params(model), 2, 4, 2, **ref_kw)
    np.testing.assert_allclose(model(ids).value.to_host(), want, atol=1e-4,
                               rtol=1e-4)
    # the KV-cache path rotates with the same options
    cache = KVCache(2)
    steps = [model(ids[:, :12], cache)] + [model(ids[:, t:t + 1], cache)
                                           for t in range(12, 20)]
    cached = np.concatenate([s.value.to_host() for s in steps], axis=1)
    np.testing.assert_allclose(cached, want, atol=1e-4, rtol=1e-4)


def test_defaults_are_plain_rope_and_one_over_sqrt_dh(queue, rng):
    cfg = DecoderConfig(vocab_size=10)
    assert (cfg.rope_scale, cfg.attn_scale) == (1.0, 0.0)
    ids = rng.integers(0, 32, size=(2, 9))
    plain = tiny(queue)(ids).value.to_host()
    explicit = tiny(queue, rope_scale=1.0, attn_scale=0.5)(ids)  # d_k = 4
    np.testing.assert_array_equal(plain, explicit.value.to_host())


def test_nope_sees_no_positions(queue, rng):
    """Without a position encoding, one layer's last logits depend only on the
    set of tokens it attends to: reversing the prefix changes nothing. (With
    two layers the earlier rows, and so the last one, do change: the causal
    mask itself carries order.)"""
    model = tiny(queue, rope_scale=0.0, n_layers=1)
    ids = rng.integers(0, 32, size=(1, 10))
    swapped = np.concatenate([ids[:, :-1][:, ::-1], ids[:, -1:]], axis=1)
    a = model(ids).value.to_host()[:, -1]
    b = model(np.ascontiguousarray(swapped)).value.to_host()[:, -1]
    np.testing.assert_allclose(a, b, atol=1e-5)
    rope = tiny(queue, n_layers=1)
    a = rope(ids).value.to_host()[:, -1]
    b = rope(np.ascontiguousarray(swapped)).value.to_host()[:, -1]
    assert np.abs(a - b).max() > 1e-3                  # RoPE does see the order


def test_option_errors():
    with pytest.raises(ValueError, match="rope_scale and attn_scale.*-1.0"):
        DecoderConfig(vocab_size=10, rope_scale=-1.0)
    with pytest.raises(ValueError, match="rope_scale and attn_scale.*-2.0"):
        DecoderConfig(vocab_size=10, attn_scale=-2.0)
    cfg = DecoderConfig(vocab_size=10, rope_scale=0.25, attn_scale=1.0)
    assert DecoderConfig.from_dict(cfg.to_dict()) == cfg
