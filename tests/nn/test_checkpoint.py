"""Checkpoints: .npz weights + JSON config, round trip and failure modes."""

import json

import numpy as np
import pytest

from netcl_lite.nn import DecoderConfig, DecoderLM, load_checkpoint, save_checkpoint
from netcl_lite.nn.checkpoint import load_weights


@pytest.fixture
def model(queue):
    cfg = DecoderConfig(vocab_size=20, dim=8, n_layers=2, n_heads=2, n_kv_heads=1,
                        max_seq_len=6, hidden_dim=12, seed=4)
    return DecoderLM(queue, cfg)


def weights(m):
    return {n: p.value.to_host() for n, p in m.named_parameters()}


def test_round_trip(queue, model, tmp_path):
    save_checkpoint(tmp_path / "run" / "ckpt", model, extra={"step": 3})
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [
        "ckpt.json", "ckpt.npz"]
    header = json.loads((tmp_path / "run" / "ckpt.json").read_text())
    assert header["version"] == 1 and header["tensors"]["head.weight"] == [8, 20]
    again, extra = load_checkpoint(tmp_path / "run" / "ckpt.npz", queue)
    assert extra == {"step": 3} and again.config == model.config
    for name, value in weights(model).items():
        np.testing.assert_array_equal(weights(again)[name], value)
    ids = np.array([[1, 2, 3, 4]])
    np.testing.assert_array_equal(again(ids).value.to_host(),
                                  model(ids).value.to_host())


def rewrite_npz(path, change):
    with np.load(path) as data:
        arrays = dict(data)
    change(arrays)
    np.savez(path, **arrays)


@pytest.mark.parametrize("change,message", [
    (lambda a: a.pop("blocks.1.ffn.w_up"),
     "missing tensor 'blocks.1.ffn.w_up'"),
    (lambda a: a.update({"blocks.0.attn.wk": np.zeros((8, 5), np.float32)}),
     r"tensor 'blocks.0.attn.wk' has shape \(8, 5\), the model expects \(8, 4\)"),
    (lambda a: a.update({"extra.weight": np.zeros(3, np.float32)}),
     "unexpected tensor 'extra.weight'"),
    (lambda a: a.update({"norm.weight": np.array(["x"] * 8, dtype=object)}),
     "tensor 'norm.weight'"),                               # pickle refused
    (lambda a: a.update({"norm.weight": np.full(8, np.nan, np.float32)}),
     "tensor 'norm.weight' must hold finite floats"),
])
def test_bad_weights_name_the_tensor(queue, model, tmp_path, change, message):
    save_checkpoint(tmp_path / "c", model)
    rewrite_npz(tmp_path / "c.npz", change)
    other = DecoderLM(queue, DecoderConfig(**{**model.config.to_dict(), "seed": 9}))
    before = weights(other)
    with pytest.raises(ValueError, match=message):
        load_weights(other, tmp_path / "c")
    for name, value in weights(other).items():              # nothing changed
        np.testing.assert_array_equal(value, before[name])


@pytest.mark.parametrize("edit,message", [
    (lambda text: text[:-5], "not valid JSON"),
    (lambda text: text.replace('"version": 1', '"version": 2'),
     "version 2 is not supported"),
    (lambda text: text.replace("netcl_lite.checkpoint", "other"),
     "not a netcl_lite.checkpoint file"),
    (lambda text: text.replace('"dim": 8', '"width": 8'), "bad config .*width"),
    (lambda text: text.replace('"n_heads": 2', '"n_heads": 0'),
     "bad config .*n_heads must be positive"),
])
def test_bad_json(queue, model, tmp_path, edit, message):
    save_checkpoint(tmp_path / "c", model)
    meta = tmp_path / "c.json"
    meta.write_text(edit(meta.read_text()))
    with pytest.raises(ValueError, match=message):
        load_checkpoint(tmp_path / "c", queue)


def test_shape_mismatch_between_config_and_weights(queue, model, tmp_path):
    save_checkpoint(tmp_path / "c", model)
    meta = tmp_path / "c.json"
    meta.write_text(meta.read_text().replace('"vocab_size": 20', '"vocab_size": 21'))
    with pytest.raises(ValueError, match=r"'tok_emb.weight' has shape \(20, 8\)"):
        load_checkpoint(tmp_path / "c", queue)
