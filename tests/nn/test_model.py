"""DecoderLM: numpy agreement, deterministic training, generation."""

import doctest
import importlib

import numpy as np
import pytest

import netcl_lite.autograd as ag
from netcl_lite.nn import DecoderConfig, DecoderLM
from netcl_lite.nn.model import sample_next, swiglu_hidden
from netcl_lite.optim import AdamW, clip_grad_norm, cosine_lr
from numpy_ref.decoder import decoder_lm
from numpy_ref.layers import cross_entropy
from tiles import each_tile  # noqa: F401 (a fixture: once per matmul tile)


def tiny(queue, **overrides):
    cfg = dict(vocab_size=32, dim=16, n_layers=2, n_heads=2, n_kv_heads=1,
               max_seq_len=12, hidden_dim=24, seed=0)
    cfg.update(overrides)
    return DecoderLM(queue, DecoderConfig(**cfg))


def test_logits_match_numpy(queue, rng):
    model = tiny(queue, n_heads=4, n_kv_heads=2)
    ids = rng.integers(0, 32, size=(3, 11))
    p = {n: w.value.to_host().astype(np.float64)
         for n, w in model.named_parameters()}
    got = model(ids).value.to_host()
    np.testing.assert_allclose(got, decoder_lm(ids, p, 2, 4, 2), atol=1e-4,
                               rtol=1e-4)
    assert model.num_parameters() == sum(a.size for a in p.values())
    last = model(ids, last_only=True).value.to_host()          # (B, 1, V)
    np.testing.assert_allclose(last, got[:, -1:], atol=1e-5)


# The tiny model's products are all below the tiled kernel's threshold
# (M*N*K >= 48^3), so it never meets the tile. This one's do: its rows
# (B * S) are 5 (the few-rows kernel), 12 (one zero-padded panel of a
# 14-row tile) and 45 (several panels, the last shifted back); its weight
# gradients are X^T @ G with K = 12 rows.
WIDE = dict(vocab_size=128, dim=96, n_layers=1, n_heads=4, n_kv_heads=2,
            max_seq_len=16, hidden_dim=128, seed=2)
WIDE_IDS = [(1, 5), (2, 6), (3, 15)]                    # (B, S) of each batch


def host_params(model):
    return {n: w.value.to_host().astype(np.float64)
            for n, w in model.named_parameters()}


@pytest.fixture(scope="module")
def wide_reference(queue):
    """What the numpy reference says about the wide model, once for every
    tile: its logits for each batch of WIDE_IDS, and, for the loss on the
    (2, 6) batch, its derivative along a random direction per weight
    (central differences in float64)."""
    rng = np.random.default_rng(5)
    p = host_params(DecoderLM(queue, DecoderConfig(**WIDE)))
    batches = [rng.integers(0, 128, size=shape) for shape in WIDE_IDS]
    logits = [decoder_lm(ids, p, 1, 4, 2) for ids in batches]
    ids, targets = batches[1], rng.integers(0, 128, size=WIDE_IDS[1])
    directions = {n: rng.standard_normal(w.shape) for n, w in p.items()}

    def loss(name, h):                   # the loss with p[name] + h * direction
        shifted = dict(p, **{name: p[name] + h * directions[name]})
        return float(cross_entropy(decoder_lm(ids, shifted, 1, 4, 2), targets))

    slopes = {n: (loss(n, 1e-6) - loss(n, -1e-6)) / 2e-6 for n in p}
    return batches, logits, targets, directions, slopes


def test_wide_model_matches_numpy_under_every_tile(queue, each_tile,
                                                   wide_reference):
    batches, logits, targets, directions, slopes = wide_reference
    model = DecoderLM(queue, DecoderConfig(**WIDE))
    for ids, want in zip(batches, logits):
        got = model(ids).value.to_host()                    # (B, S, V)
        np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)
    with ag.Tape() as tape:
        loss = model.loss(batches[1], targets)
    tape.backward(loss)
    for name, w in model.named_parameters():
        got = float(np.sum(w.grad.to_host() * directions[name]))
        want = slopes[name]
        assert abs(got - want) < 1e-3 * max(1.0, abs(want)), (name, got, want)


def train(queue, steps=30):
    """A tiny model learns a noisy cyclic sequence; returns the losses."""
    model = tiny(queue, seed=1)
    opt = AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(0)
    data = (np.arange(400) * 5) % 32                   # a period-32 pattern
    data[rng.random(400) < 0.1] = 0                    # with some noise
    losses = []
    for step in range(steps):
        start = rng.integers(0, len(data) - 9, size=4)
        x = np.stack([data[s:s + 8] for s in start])       # (B, S)
        y = np.stack([data[s + 1:s + 9] for s in start])   # next tokens
        with ag.Tape() as tape:
            loss = model.loss(x, y)
        opt.zero_grad()
        tape.backward(loss)
        clip_grad_norm(model.parameters(), 1.0)
        opt.lr = cosine_lr(step, steps, 1e-2, warmup=3)
        opt.step()
        losses.append(float(loss.value.to_host()))
    return losses


def test_training_lowers_the_loss_deterministically(queue):
    first, second = train(queue), train(queue)
    assert first == second                              # bit for bit
    assert np.mean(first[-5:]) < 0.7 * np.mean(first[:5]), first


def test_generation_is_seeded_and_cache_agnostic(queue):
    model = tiny(queue)
    prompt = [3, 1, 4]
    a = model.generate(prompt, 8, temperature=1.0, top_k=5, seed=7)
    assert a == model.generate(prompt, 8, temperature=1.0, top_k=5, seed=7)
    assert a == model.generate(prompt, 8, temperature=1.0, top_k=5, seed=7,
                               use_cache=False)
    assert len(a) == 8 and all(0 <= t < 32 for t in a)
    greedy = model.generate(prompt, 6, temperature=0.0)
    assert greedy == model.generate(prompt, 6, top_k=1, seed=123)
    # greedy by hand: append the argmax of the last logits each step
    ids = list(prompt)
    for _ in range(6):
        ids.append(int(np.argmax(model(np.array([ids])).value.to_host()[0, -1])))
    assert greedy == ids[3:]
    # without the cache the context slides past max_seq_len
    assert len(model.generate(prompt, 15, use_cache=False, seed=1)) == 15


def test_batched_generation_matches_row_by_row(queue):
    model = tiny(queue)
    prompts = np.array([[3, 1, 4], [1, 5, 9], [2, 6, 5]])
    greedy = model.generate(prompts, 5, temperature=0.0)
    assert greedy == [model.generate(p, 5, temperature=0.0) for p in prompts]
    assert greedy == model.generate(prompts, 5, temperature=0.0, use_cache=False)
    sampled = model.generate(prompts, 5, top_k=4, seed=2)
    assert sampled == model.generate(prompts, 5, top_k=4, seed=2, use_cache=False)
    assert len(sampled) == 3 and all(len(row) == 5 for row in sampled)


def test_generation_rejects_bad_arguments(queue):
    model = tiny(queue)
    cases = [
        (dict(prompt=[], max_new_tokens=2), "at least one token"),
        (dict(prompt=[32], max_new_tokens=2), r"prompt id 32 is outside \[0, 32\)"),
        (dict(prompt=[1], max_new_tokens=-1), "max_new_tokens"),
        (dict(prompt=[1], max_new_tokens=2, temperature=-1.0), "temperature"),
        (dict(prompt=[1], max_new_tokens=2, top_k=0), r"top_k must be None or 1..32"),
        (dict(prompt=[[[1]]], max_new_tokens=2), r"got shape \(1, 1, 1\)"),
        (dict(prompt=[1.5], max_new_tokens=2), "must be integers"),
        (dict(prompt=[1] * 10, max_new_tokens=4), r"max_seq_len 12"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            model.generate(**kwargs)


def test_sample_next_temperature_and_top_k():
    logits = np.array([0.0, 2.0, 1.0, -1.0, 1.5])
    rng = np.random.default_rng(0)
    draws = [sample_next(logits, 1.0, 2, rng) for _ in range(300)]
    assert set(draws) == {1, 4}                         # the two largest only
    cold = [sample_next(logits, 0.05, None, rng) for _ in range(50)]
    assert set(cold) == {1}                             # low temperature: argmax
    hot = [sample_next(logits, 100.0, None, rng) for _ in range(300)]
    assert set(hot) == {0, 1, 2, 3, 4}                  # high: nearly uniform
    again = np.random.default_rng(0)
    assert draws == [sample_next(logits, 1.0, 2, again) for _ in range(300)]


def test_attention_maps_are_causal_distributions(queue, rng):
    model = tiny(queue)
    maps = model.attention_maps(rng.integers(0, 32, size=(2, 9)))
    assert len(maps) == 2 and maps[0].shape == (2, 2, 9, 9)   # (B, H, S, S)
    for A in maps:
        np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-5)
        assert np.all(np.triu(A, k=1) == 0)


def np_causal_softmax(scores):
    """softmax over the last axis with the causal mask, in float64."""
    S = scores.shape[-1]
    scores = np.where(np.tril(np.ones((S, S), bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_attention_maps_are_the_weights_the_forward_pass_applies(queue, rng):
    """The maps against the real forward: the tape names each layer's fused
    attention op, and its inputs are the q, k, v that layer attended with."""
    model = tiny(queue, n_heads=4, n_kv_heads=2, n_layers=3)
    ids = rng.integers(0, 32, size=(2, 10))
    with ag.Tape() as tape:
        model(ids)
    attended = [(out, inputs) for out, inputs, _ in tape.records
                if out.op == "flash_attention"]
    maps = model.attention_maps(ids)
    assert len(attended) == len(maps) == 3
    for (out, (q, k, v)), A in zip(attended, maps):
        q, k, v = (x.value.to_host().astype(np.float64) for x in (q, k, v))
        k, v = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)  # GQA: 2 per kv
        want = np_causal_softmax(q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1]))
        np.testing.assert_allclose(A, want, atol=1e-5, rtol=1e-4)
        np.testing.assert_allclose(A @ v, out.value.to_host(), atol=1e-4,
                                   rtol=1e-4)


def test_config_checks_and_round_trip():
    cfg = DecoderConfig(vocab_size=10, dim=128)
    assert cfg.hidden_dim == swiglu_hidden(128) == 352
    assert DecoderConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown keys"):
        DecoderConfig.from_dict({"vocab_size": 3, "width": 4})
    with pytest.raises(ValueError, match="missing key 'vocab_size'"):
        DecoderConfig.from_dict({"dim": 4})
    with pytest.raises(ValueError, match="n_layers must be positive, got 0"):
        DecoderConfig(vocab_size=10, n_layers=0)
    with pytest.raises(ValueError, match="dim must be int"):
        DecoderConfig(vocab_size=10, dim=12.5)


@pytest.mark.parametrize("name", [
    "nn.norm", "nn.feed_forward", "nn.block", "nn.model", "nn.kv_cache",
    "nn.checkpoint", "optim.adamw", "optim.clip", "optim.schedule"])
def test_docstring_examples_run(name):
    module = importlib.import_module(f"netcl_lite.{name}")
    assert doctest.testmod(module).failed == 0
