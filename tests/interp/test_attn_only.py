"""DecoderConfig(attn_only=True): chapter 10's model, blocks without an MLP,
through the library's other paths (checkpoints, generation, the config's
checks). Its forward pass is checked against numpy in test_hooks.py."""

import numpy as np
import pytest

from interp_ref import forward, tiny
from netcl_lite.nn import DecoderConfig, DecoderLM, load_checkpoint, save_checkpoint
from netcl_lite.nn.checkpoint import expected_shapes


def test_the_blocks_have_no_mlp(queue):
    model = tiny(queue, H=2, HKV=2, attn_only=True)
    names = [n for n, _ in model.named_parameters()]
    assert not any("ffn" in n for n in names)
    assert {n: p.shape for n, p in model.named_parameters()} == \
        expected_shapes(model.config)
    ids = np.array([[1, 2, 3, 4, 1, 2]])
    np.testing.assert_allclose(model(ids).value.to_host(), forward(model, ids)[0],
                               atol=5e-5, rtol=1e-4)


def test_same_seed_same_attention_as_with_an_mlp(queue):
    """attn_only drops the MLPs and changes nothing else: the embeddings,
    attention weights and head are those of the full model of the seed."""
    a = dict(tiny(queue, H=2, HKV=2, attn_only=True).named_parameters())
    b = dict(tiny(queue, H=2, HKV=2, attn_only=False).named_parameters())
    for name, p in a.items():
        np.testing.assert_array_equal(p.value.to_host(), b[name].value.to_host())


def test_checkpoint_and_generate(queue, tmp_path):
    model = tiny(queue, H=2, HKV=2, attn_only=True)
    save_checkpoint(tmp_path / "ckpt", model)
    again, _ = load_checkpoint(tmp_path / "ckpt.npz", queue)
    assert again.config.attn_only is True
    ids = np.array([[3, 1, 4, 1, 5]])
    np.testing.assert_array_equal(again(ids).value.to_host(),
                                  model(ids).value.to_host())
    cached = model.generate([1, 2, 3], max_new_tokens=5, top_k=5, seed=1)
    plain = model.generate([1, 2, 3], max_new_tokens=5, top_k=5, seed=1,
                           use_cache=False)
    assert cached == plain and len(cached) == 5


@pytest.mark.parametrize("value", [1, "yes", None, 0.0])
def test_attn_only_must_be_a_bool(value):
    with pytest.raises(ValueError, match="attn_only must be True or False"):
        DecoderConfig(vocab_size=10, attn_only=value)


def test_the_config_round_trips_as_a_dict(queue):
    cfg = DecoderConfig(vocab_size=10, dim=8, n_heads=2, n_kv_heads=2,
                        attn_only=True)
    assert DecoderConfig.from_dict(cfg.to_dict()) == cfg
    assert DecoderLM(queue, cfg).hook_names()[:5] == [
        "blocks.0.resid_pre", "blocks.0.attn.pattern", "blocks.0.attn.z",
        "blocks.0.attn_out", "blocks.0.resid_post"]
