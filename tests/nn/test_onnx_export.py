"""``DecoderLM.export_onnx`` against onnxruntime on the CPU.

The exported graph is a second implementation of the whole forward pass,
written operator by operator (nn/onnx_export.py), and onnxruntime runs it
without a line of netcl_lite: where both agree, on configurations that use
every feature (RMSNorm gains, RoPE with rope_scale, GQA, attn_scale, SwiGLU,
several layers), each checks the other. The logits agree within 1e-4 of
their largest magnitude, the attention weights within 1e-5 (1e-4 for
weights of a trained model's size).

onnx and onnxruntime are in the dev extra; without them these tests skip.
"""

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import DecoderConfig, DecoderLM
from netcl_lite.nn import onnx_export

NEEDS = "onnx and onnxruntime (the dev extra) run the exported graph"
TOL = 1e-4        # relative to the largest logit magnitude


@pytest.fixture(scope="module")
def ort():
    pytest.importorskip("onnx", reason=NEEDS)
    return pytest.importorskip("onnxruntime", reason=NEEDS)


def model_with(queue, rng, **overrides):
    """A tiny model whose every weight is drawn anew, RMSNorm gains too (they
    start at 1, which would hide a missing gain)."""
    cfg = dict(vocab_size=40, dim=32, n_layers=2, n_heads=4, n_kv_heads=2,
               max_seq_len=16, hidden_dim=48, seed=0)
    cfg.update(overrides)
    model = DecoderLM(queue, DecoderConfig(**cfg))
    for name, p in model.named_parameters():
        a = p.value.to_host()
        if "norm" in name:
            a = 1 + 0.5 * rng.standard_normal(a.shape)
        else:
            a = a * (1 + 0.2 * rng.standard_normal(a.shape))
        p.value = Tensor.from_host(queue, a.astype(np.float32))
    return model


def run_onnx(ort, path, ids):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"ids": np.asarray(ids, np.int32)})


def check_against_model(ort, model, path, ids, atol_attention=1e-5):
    logits, attention = run_onnx(ort, path, ids)
    want = model(ids).value.to_host()                           # (B, S, V)
    assert logits.shape == want.shape
    err = np.abs(logits - want).max() / np.abs(want).max()
    assert err < TOL, f"logits differ by {err:.2e} of their scale"
    maps = np.stack(model.attention_maps(ids))                  # (L, B, H, S, S)
    assert attention.shape == maps.shape
    np.testing.assert_allclose(attention, maps, atol=atol_attention)
    return logits


CONFIGS = {
    "gqa": dict(),                                        # 4 query, 2 kv heads
    "mqa, 3 layers": dict(n_kv_heads=1, n_layers=3),      # one kv head for all
    "mha": dict(n_heads=2, n_kv_heads=2),                 # no sharing
    "rope_scale 1/4": dict(rope_scale=0.25),              # interpolation
    "nope": dict(rope_scale=0.0),                         # no position encoding
    "rope_base, eps": dict(rope_base=500.0, norm_eps=1e-3),
    "attn_scale 1": dict(attn_scale=1.0),                 # no 1/sqrt(d_k)
    "attention only": dict(attn_only=True),               # no MLP (chapter 10)
    "all at once": dict(n_heads=8, n_kv_heads=2, n_layers=2, rope_scale=3.0,
                        attn_scale=0.3, hidden_dim=40),
    # real models: the head reads the embedding table; 4 heads of 12 != 32
    "tied head, head_dim 12": dict(tie_head=True, head_dim=12),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_logits_and_attention_match_the_model(queue, rng, ort, tmp_path, name):
    model = model_with(queue, rng, **CONFIGS[name])
    path = tmp_path / "model.onnx"
    model.export_onnx(path)
    T = model.config.max_seq_len
    for B, S in ((1, 1), (2, 7), (3, T)):     # one token, some, the whole context
        ids = rng.integers(0, model.config.vocab_size, size=(B, S))
        check_against_model(ort, model, path, ids)


def test_the_trained_scale_of_logits(queue, rng, ort, tmp_path):
    """Larger weights (logits of tens, as after training) keep the logits'
    tolerance; the sharper scores of the second layer move its attention
    weights by up to 2e-5 (float32 sums in another order)."""
    model = model_with(queue, rng, dim=64, n_heads=4, n_kv_heads=2,
                       hidden_dim=96, max_seq_len=32)
    for name, p in model.named_parameters():
        if "norm" not in name:
            p.value = Tensor.from_host(queue, 3 * p.value.to_host())
    model.export_onnx(tmp_path / "m.onnx")
    ids = rng.integers(0, 40, size=(2, 32))
    logits = check_against_model(ort, model, tmp_path / "m.onnx", ids,
                                 atol_attention=1e-4)
    assert np.abs(logits).max() > 10


def test_window_if_the_config_has_one(queue, rng, ort, tmp_path):
    if "window" not in {f.name for f in dataclasses.fields(DecoderConfig)}:
        pytest.skip("DecoderConfig has no sliding window on this branch")
    model = model_with(queue, rng, window=3)
    model.export_onnx(tmp_path / "w.onnx")
    check_against_model(ort, model, tmp_path / "w.onnx",
                        rng.integers(0, 40, size=(2, 12)))


def test_the_file_names_its_weights_and_config(queue, rng, ort, tmp_path):
    import onnx
    from onnx import numpy_helper

    model = model_with(queue, rng, rope_scale=0.5, attn_scale=0.7)
    proto = model.export_onnx(tmp_path / "sub" / "m.onnx")     # makes sub/
    onnx.checker.check_model(proto, full_check=True)
    stored = {t.name: numpy_helper.to_array(t)
              for t in onnx.load(tmp_path / "sub" / "m.onnx").graph.initializer}
    for name, p in model.named_parameters():
        np.testing.assert_array_equal(stored[name], p.value.to_host())
    meta = {p.key: p.value for p in proto.metadata_props}
    config = DecoderConfig.from_dict(json.loads(meta["netcl_lite.config"]))
    assert config == model.config


def test_rope_tables_turn_pairs_as_the_library_does(queue, rng):
    """The stored cos/sin and the pair swap reproduce F.rope (no onnx needed)."""
    import netcl_lite.functional as F

    x = rng.standard_normal((2, 9, 8)).astype(np.float32)      # (n, S, d)
    cos, sin = onnx_export.rope_tables(9, 8, 10000.0, 0.25)    # (S, d)
    ours = x * cos + (x @ onnx_export.pair_swap(8)) * sin
    want = F.rope(Tensor.from_host(queue, x), scale=0.25).value.to_host()
    np.testing.assert_allclose(ours, want, atol=1e-6)


def test_importing_the_library_does_not_import_onnx():
    code = ("import sys, netcl_lite, netcl_lite.nn, netcl_lite.functional; "
            "print('onnx' in sys.modules, 'onnxruntime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_missing_onnx_is_named_with_the_fix(queue, rng, tmp_path, monkeypatch):
    model = model_with(queue, rng)
    monkeypatch.setattr(onnx_export.importlib.util, "find_spec",
                        lambda name: None)
    with pytest.raises(ImportError, match="needs the onnx package: pip install"):
        model.export_onnx(tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


def test_not_a_model_is_refused(tmp_path):
    pytest.importorskip("onnx", reason=NEEDS)
    with pytest.raises(ValueError, match="needs a DecoderLM, got dict"):
        onnx_export.export_onnx({}, tmp_path / "m.onnx")
