"""What real models brought to DecoderLM, on the course's own models: a
tied head, a head width of its own, building without drawing weights,
checkpoints with and without the new config keys, and a layer that keeps
its weight in another form (as a quantised one will) refused by name where
only float parameters can go."""

import json

import numpy as np
import pytest

import netcl_lite.autograd as ag
import netcl_lite.functional as F
from netcl_lite.core.program import trace
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import (DecoderConfig, DecoderLM, FusedDecoder, Module,
                           load_checkpoint, save_checkpoint)
from netcl_lite.nn import decode
from netcl_lite.nn.module import deferred_init
from netcl_lite.nn.tied_head import TiedHead
from netcl_lite.nn.weights import quantised_layers
from numpy_ref.decoder import decoder_lm


def tiny(queue, **overrides):
    cfg = dict(vocab_size=32, dim=16, n_layers=2, n_heads=4, n_kv_heads=2,
               max_seq_len=12, hidden_dim=24, seed=1)
    cfg.update(overrides)
    return DecoderLM(queue, DecoderConfig(**cfg))


def host(model):
    return {n: w.value.to_host().astype(np.float64)
            for n, w in model.named_parameters()}


def test_config_checks_and_defaults():
    cfg = DecoderConfig(vocab_size=8)
    assert cfg.head_dim == 0 and cfg.tie_head is False
    assert DecoderConfig.from_dict(cfg.to_dict()) == cfg
    assert "head_dim" not in cfg.to_dict()             # as written before
    real = DecoderConfig(vocab_size=8, head_dim=6, tie_head=True)
    assert real.to_dict()["head_dim"] == 6 and real.to_dict()["tie_head"]
    assert DecoderConfig.from_dict(real.to_dict()) == real
    assert "head_dim" not in repr(cfg) and "tie_head" not in repr(cfg)
    assert repr(DecoderConfig(vocab_size=8, tie_head=True)).endswith(
        "window=0, tie_head=True)")            # shown once set
    with pytest.raises(ValueError, match="tie_head must be True or False"):
        DecoderConfig(vocab_size=8, tie_head=1)
    with pytest.raises(ValueError, match="head_dim must be >= 0"):
        DecoderConfig(vocab_size=8, head_dim=-2)


@pytest.mark.parametrize("overrides", [
    dict(tie_head=True), dict(head_dim=6), dict(head_dim=10, n_kv_heads=1),
    dict(tie_head=True, head_dim=6, dim=18),     # 18 / 4 heads is no integer
])
def test_forward_matches_numpy(queue, rng, overrides):
    model = tiny(queue, **overrides)
    c = model.config
    p = host(model)
    assert ("head.weight" in p) != c.tie_head
    hd = c.head_dim or c.dim // c.n_heads
    assert p["blocks.0.attn.wq"].shape == (c.dim, c.n_heads * hd)
    assert p["blocks.0.attn.wo"].shape == (c.n_heads * hd, c.dim)
    ids = rng.integers(0, c.vocab_size, size=(2, 9))
    want = decoder_lm(ids, p, c.n_layers, c.n_heads, c.n_kv_heads)
    np.testing.assert_allclose(model(ids).value.to_host(), want, atol=1e-4,
                               rtol=1e-4)
    assert model.num_parameters() == sum(a.size for a in p.values())


def test_a_tied_table_gets_both_gradients(queue, rng):
    """d loss / d E of a tied model = what the embedding sends + what the
    head sends (transposed): the same untied model, with head = E^T, has
    both as separate gradients."""
    tied = tiny(queue, tie_head=True)
    untied = tiny(queue)
    for p, q in zip(tied.parameters(), untied.parameters()):
        q.value = p.value
    E = tied.tok_emb.weight.value.to_host()
    untied.head.weight.value = Tensor.from_host(queue, E.T.copy())
    ids, targets = rng.integers(0, 32, (2, 8)), rng.integers(0, 32, (2, 8))
    for model in (tied, untied):
        with ag.Tape() as tape:
            loss = model.loss(ids, targets)
        tape.backward(loss)
    both = untied.tok_emb.weight.grad.to_host() + \
        untied.head.weight.grad.to_host().T
    np.testing.assert_allclose(tied.tok_emb.weight.grad.to_host(), both,
                               atol=1e-5, rtol=1e-4)


def test_deferred_init_allocates_and_draws_nothing(queue):
    cfg = DecoderConfig(vocab_size=32, dim=16, n_layers=2, n_heads=4,
                        n_kv_heads=2, max_seq_len=12, hidden_dim=24, seed=1)
    with trace() as log, deferred_init():
        empty = DecoderLM(queue, cfg)
    assert list(log) == []                     # no kernel, no upload
    assert [p.shape for p in empty.parameters()] == \
        [p.shape for p in DecoderLM(queue, cfg).parameters()]
    again = DecoderLM(queue, cfg)               # outside: seeded as before
    for a, b in zip(again.parameters(), DecoderLM(queue, cfg).parameters()):
        np.testing.assert_array_equal(a.value.to_host(), b.value.to_host())


def test_checkpoint_round_trip_tied_and_own_head_dim(queue, tmp_path):
    model = tiny(queue, tie_head=True, head_dim=6)
    save_checkpoint(tmp_path / "c", model)
    header = json.loads((tmp_path / "c.json").read_text())
    assert "head.weight" not in header["tensors"]
    assert header["tensors"]["blocks.0.attn.wq"] == [16, 24]
    again, _ = load_checkpoint(tmp_path / "c", queue)
    assert again.config == model.config and type(again.head) is TiedHead
    ids = np.array([[1, 2, 3]])
    np.testing.assert_array_equal(again(ids).value.to_host(),
                                  model(ids).value.to_host())


def test_a_course_models_checkpoint_is_written_as_before(queue, tmp_path):
    """No head_dim or tie_head in its config: the file is what the library
    wrote before real models came, and such files load."""
    model = tiny(queue)
    save_checkpoint(tmp_path / "c", model)
    header = json.loads((tmp_path / "c.json").read_text())
    assert sorted(header["config"]) == sorted(
        ["vocab_size", "dim", "n_layers", "n_heads", "n_kv_heads",
         "max_seq_len", "hidden_dim", "rope_base", "rope_scale", "attn_scale",
         "norm_eps", "seed", "window"])
    again, _ = load_checkpoint(tmp_path / "c", queue)
    assert again.config == model.config


class FrozenLinear(Module):
    """A weight kept as a layer of its own, y = x W^T with W (out, in) and no
    parameters: what a quantised layer looks like to the model."""

    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return F.linear(x, self.w)


def freeze(model, block=1, name="wk"):
    """Replace one weight by a FrozenLinear that computes the same."""
    attn = model.blocks[block].attn
    w = getattr(attn, name).value.to_host()               # (in, out)
    setattr(attn, name, FrozenLinear(Tensor.from_host(model.queue,
                                                      w.T.copy())))
    return model


def test_a_frozen_layer_runs_forward_and_backward_to_its_input(queue, rng):
    model = tiny(queue)
    ids = rng.integers(0, 32, (1, 7))
    before = model(ids).value.to_host()
    freeze(model)
    assert quantised_layers(model) == ["blocks.1.attn.wk (FrozenLinear)"]
    np.testing.assert_allclose(model(ids).value.to_host(), before, atol=1e-5)
    assert "blocks.1.attn.wk" not in dict(model.named_parameters())
    with ag.Tape() as tape:
        mask = ag.tensor(Tensor.from_host(queue, np.ones(4)))
        loss = model.loss(ids, ids, head_mask={0: mask})
    tape.backward(loss)        # through block 1's frozen layer to block 0
    assert np.abs(mask.grad.to_host()).max() > 0


def test_a_frozen_layer_is_refused_by_name_where_floats_are_needed(
        queue, tmp_path, monkeypatch):
    model = freeze(tiny(queue))
    with pytest.raises(ValueError, match=r"save_checkpoint: blocks\.1\.attn\.wk"
                                         r" \(FrozenLinear\) is quantised"):
        save_checkpoint(tmp_path / "c", model)
    assert not (tmp_path / "c.npz").exists()
    pytest.importorskip("onnx")
    with pytest.raises(ValueError, match=r"export_onnx: blocks\.1\.attn\.wk"):
        model.export_onnx(tmp_path / "m.onnx")
    assert decode.unsupported(model).startswith("blocks.1.attn.wk")
    with pytest.raises(ValueError, match="FusedDecoder: blocks.1.attn.wk"):
        FusedDecoder(model, 1)
    # generate takes the layer-by-layer KVCache path and agrees with the
    # plain model on the fused path
    plain = tiny(queue)
    assert model.generate([1, 2, 3], 6, temperature=0.0) == \
        plain.generate([1, 2, 3], 6, temperature=0.0)


def test_a_long_max_seq_len_allocates_for_the_text_only(queue):
    """8192 positions, as SmolLM2: generating 6 tokens after 3 takes no
    buffer sized for 8192 (a fused cache for all of them would be 8192 x
    HKV x d_k floats per layer, RoPE's table 8192 x d_k), and picks the
    same tokens as a model whose max_seq_len is the text's."""
    long = tiny(queue, max_seq_len=8192)
    short = tiny(queue, max_seq_len=9)
    with trace() as log:
        got = long.generate([1, 2, 3], 6, temperature=0.0)
    assert max(log.allocations) < 8192 * 4    # a float per position, at most
    assert any(k.startswith("decode.cl") for k in log)     # fused path
    assert got == short.generate([1, 2, 3], 6, temperature=0.0)
