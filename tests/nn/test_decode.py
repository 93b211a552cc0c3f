"""FusedDecoder (nn/decode.py, inference/decoder.py, kernels/decode.cl): every
step's logits against the layer-by-layer forward and the numpy reference, the
tokens ``generate`` picks against the unfused KV-cache path, and the launches."""

import numpy as np
import pytest

import netcl_lite.autograd as ag
from netcl_lite.core.program import trace
from netcl_lite.inference import decoder as inference
from netcl_lite.nn import DecoderConfig, DecoderLM, FusedDecoder, KVCache
from netcl_lite.nn import decode
from numpy_ref.decoder import decoder_lm

SHAPES = {   # name: (config overrides, batch)
    "gqa": (dict(), 2),
    "mha": (dict(n_heads=2, n_kv_heads=2), 1),
    "odd": (dict(vocab_size=37, dim=20, n_heads=2, n_kv_heads=1,
                 hidden_dim=37, max_seq_len=13), 3),
    "tiny": (dict(vocab_size=7, dim=6, n_layers=1, n_heads=3, n_kv_heads=3,
                  hidden_dim=5, max_seq_len=5), 2),
    "wide": (dict(vocab_size=70, dim=64, n_heads=4, n_kv_heads=1,
                  hidden_dim=72, max_seq_len=9), 2),
    "scaled": (dict(rope_scale=0.25, attn_scale=1.0, rope_base=500.0), 2),
    "nope": (dict(rope_scale=0.0), 1),
    # sliding window: 3 keys, a third of the 10 positions; 1: itself only
    "window": (dict(window=3), 2),
    "window1": (dict(window=1, n_layers=1), 1),
    # real models: a tied head (copied once, transposed) and 4 heads of 6
    "tied_head_dim": (dict(tie_head=True, head_dim=6), 2),
}


def model_of(queue, **overrides):
    cfg = dict(vocab_size=32, dim=16, n_layers=2, n_heads=4, n_kv_heads=2,
               max_seq_len=10, hidden_dim=24, seed=3)
    cfg.update(overrides)
    return DecoderLM(queue, DecoderConfig(**cfg))


def reference(model, ids):
    """The numpy reference's logits (B, S, V) in float64."""
    c = model.config
    p = {n: w.value.to_host().astype(np.float64)
         for n, w in model.named_parameters()}
    return decoder_lm(ids, p, c.n_layers, c.n_heads, c.n_kv_heads, c.rope_base,
                      c.norm_eps, c.rope_scale, c.attn_scale or None,
                      window=c.window or None)


def run_fused(model, prompt, feeds):
    """Prompt through forward + KVCache, then one FusedDecoder step per
    column of feeds: the logits of every step, (steps, B, V)."""
    cache = KVCache(model.config.n_layers)
    model(prompt, cache)
    decoder = FusedDecoder(model, len(prompt))
    decoder.start(cache)
    return np.stack([decoder.step(feeds[:, t]) for t in range(feeds.shape[1])])


@pytest.mark.parametrize("name", list(SHAPES))
def test_steps_match_forward_and_numpy(queue, name):
    overrides, B = SHAPES[name]
    model = model_of(queue, **overrides)
    V, T = model.config.vocab_size, model.config.max_seq_len
    rng = np.random.default_rng(len(name))
    P = 2 if T > 5 else 1
    ids = rng.integers(0, V, size=(B, T)).astype(np.int32)   # fill the cache
    got = run_fused(model, ids[:, :P], ids[:, P:])           # (T - P, B, V)
    full = model(ids).value.to_host()                        # (B, T, V)
    ref = reference(model, ids)
    for t in range(T - P):
        want = full[:, P + t]                                # (B, V)
        scale = np.abs(want).max()
        assert np.abs(got[t] - want).max() <= 1e-5 * scale + 1e-6, (name, t)
        np.testing.assert_allclose(got[t], ref[:, P + t], rtol=1e-4,
                                   atol=1e-4 * scale)


def test_one_step_after_a_one_token_prompt(queue):
    model = model_of(queue)
    ids = np.array([[5, 9]], np.int32)
    got = run_fused(model, ids[:, :1], ids[:, 1:])[0]
    np.testing.assert_allclose(got, model(ids).value.to_host()[:, 1],
                               rtol=1e-5, atol=1e-6)


def tokens(model, monkeypatch, fused, *args, **kwargs):
    monkeypatch.setattr(decode, "ENABLED", fused)
    return model.generate(*args, **kwargs)


@pytest.mark.parametrize("name", ["gqa", "odd", "scaled", "window"])
def test_generate_picks_the_same_tokens(queue, monkeypatch, name):
    overrides, B = SHAPES[name]
    model = model_of(queue, **overrides)
    T, V = model.config.max_seq_len, model.config.vocab_size
    prompt = np.random.default_rng(1).integers(0, V, size=(B, 3))
    for kwargs in (dict(temperature=0.0), dict(top_k=4, seed=5),
                   dict(temperature=0.7, seed=9)):
        runs = [tokens(model, monkeypatch, f, prompt, T - 2, **kwargs)
                for f in (True, False)]
        assert runs[0] == runs[1], kwargs
        one = tokens(model, monkeypatch, True, prompt[0], T - 2, **kwargs)
        assert one == tokens(model, monkeypatch, False, prompt[0], T - 2,
                             **kwargs)


def test_a_step_is_eleven_launches_and_no_allocation(queue):
    model = model_of(queue)                                   # 2 layers
    cache = KVCache(2)
    model(np.array([[1, 2, 3]], np.int32), cache)
    decoder = FusedDecoder(model, 1)
    decoder.start(cache)
    with trace() as ran:
        decoder.step([4])
    assert len(ran) == 5 * 2 + 1 and set(ran) <= {
        "decode.cl:decode_qkv", "decode.cl:decode_attention",
        "decode.cl:decode_residual", "decode.cl:decode_swiglu",
        "decode.cl:decode_norm_matvec"}
    assert ran.allocations == []
    with trace() as ran:                                      # generate too
        model.generate([1, 2, 3], 4, temperature=0.0)
    assert sum(k.startswith("decode.cl:decode_qkv") for k in ran) == 3 * 2


def test_bad_use_is_refused_before_any_kernel(queue):
    model = model_of(queue)
    with pytest.raises(ValueError, match="batch must be a positive int"):
        FusedDecoder(model, 0)
    decoder = FusedDecoder(model, 2)
    cache = KVCache(2)
    model(np.array([[1, 2, 3]], np.int32), cache)             # batch 1, not 2
    with pytest.raises(ValueError, match=r"expected cached k of shape \(2, 2, 3, 4\)"):
        decoder.start(cache)
    with pytest.raises(ValueError, match="the cache has 1 layers, the model 2"):
        decoder.start(KVCache(1))
    with trace() as ran:
        with pytest.raises(ValueError, match=r"expected 2 ids in \[0, 32\), got \[1\]"):
            decoder.step([1])
        with pytest.raises(ValueError, match=r"got \[1, 32\]"):
            decoder.step([1, 32])
        with ag.Tape():
            with pytest.raises(ValueError, match="close the Tape"):
                decoder.step([1, 2])
    assert ran == []
    decoder.length = model.config.max_seq_len                 # a full cache
    with pytest.raises(ValueError, match="past max_seq_len 10"):
        decoder.step([1, 2])


def test_other_layers_keep_the_general_path(queue):
    model = model_of(queue)
    assert decode.fused_decoding(model)
    model.blocks[1].attn.causal = False
    assert not decode.fused_decoding(model)
    with pytest.raises(ValueError, match="block 1's attention is not causal"):
        FusedDecoder(model, 1)
    model.blocks[1].attn.causal = True
    model.blocks[1].attn.window = 4                       # block 0 has none
    with pytest.raises(ValueError, match="block 1 is not shaped like block 0"):
        FusedDecoder(model, 1)
    model.blocks[1].attn.window = None
    model.blocks[0].ffn_norm = model.blocks[0].attn       # any other module
    with pytest.raises(ValueError, match="block 0 holds a RotaryAttention, not "
                                         "a RMSNorm"):
        FusedDecoder(model, 1)


def test_the_inference_layer_decodes_from_weights_alone(queue):
    """nn.FusedDecoder is the inference layer's decoder, fed from a DecoderLM;
    the inference one checks the shapes of the weights it is given."""
    model = model_of(queue)
    assert issubclass(FusedDecoder, inference.FusedDecoder)
    weights = decode.decoder_weights(model)
    cache = KVCache(2)
    model(np.array([[1, 2, 3]], np.int32), cache)
    steps = inference.FusedDecoder(weights, 1)
    steps.start([(layer.k, layer.v) for layer in cache.layers])
    via_nn = FusedDecoder(model, 1)
    via_nn.start(cache)
    np.testing.assert_array_equal(steps.step([4]), via_nn.step([4]))
    weights.layers[1].w_down = weights.layers[1].w_up              # (16, 24)
    with trace() as ran:
        with pytest.raises(ValueError, match=r"layer 1's w_down is \(16, 24\), "
                                             r"expected \(24, 16\)"):
            inference.FusedDecoder(weights, 1)
    assert ran == [] and ran.allocations == []
