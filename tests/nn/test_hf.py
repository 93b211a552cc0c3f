"""DecoderLM.from_hf on tiny LlamaForCausalLM folders written here
(config.json + model.safetensors), against numpy_ref/llama.py with
rotate-half RoPE applied to the weights as the file holds them, as
transformers computes. (Checking against our own permutation run backwards
would pass a bug that the permutation and its inverse share.)"""

import json

import numpy as np
import pytest

pytest.importorskip("safetensors")

from llama_files import Tiny, random_weights, write_hf  # noqa: E402
from netcl_lite.core.program import trace  # noqa: E402
from netcl_lite.nn import DecoderLM  # noqa: E402
from numpy_ref.llama import llama_forward  # noqa: E402

CASES = {
    # tied head, a head width of its own, rope_theta under rope_parameters
    "tied_nested": (Tiny(base=500.0), "nested"),
    # untied, the default head width, rope_theta at the top level
    "untied_top": (Tiny(HKV=1, head_dim=16, F=128, tied=False, base=500.0),
                   "top"),
}
IDS = [3, 17, 5, 60, 2, 9, 41, 33, 0, 12, 7, 19, 50, 1]


@pytest.mark.parametrize("dtype", ["F32", "BF16", "F16"])
@pytest.mark.parametrize("case", CASES)
def test_logits_match_rotate_half_numpy(queue, tmp_path, case, dtype):
    cfg, rope_key = CASES[case]
    held = write_hf(tmp_path / "m", cfg, random_weights(cfg, seed=3), dtype,
                    rope_key)
    model = DecoderLM.from_hf(tmp_path / "m", queue)
    assert model.config.tie_head == cfg.tied
    assert model.config.rope_base == cfg.base
    assert model.stop_ids == (2,)                   # generation_config.json
    got = model(np.array([IDS], np.int32)).value.to_host()[0]      # (S, V)
    want = llama_forward(IDS, held, cfg.H, cfg.HKV, cfg.head_dim, cfg.base,
                         cfg.eps, rope="half")
    err, top = np.abs(got - want).max(), np.abs(want).max()
    assert err <= 1e-4 * top, f"max |diff| {err:.3g} vs max |logit| {top:.3g}"
    # the layouts really differ: the interleaved formula on these weights
    # is another model (so the test can tell a missing conversion)
    other = llama_forward(IDS, held, cfg.H, cfg.HKV, cfg.head_dim, cfg.base,
                          cfg.eps, rope="interleaved")
    assert np.abs(got - other).max() > 100 * err


def test_hf_and_gguf_of_one_model_agree(queue, tmp_path):
    """The same float weights as a GGUF file (q and k permuted as llama.cpp's
    converter does) and as a Hugging Face folder give the same logits."""
    pytest.importorskip("gguf")
    from llama_files import write_gguf
    from netcl_lite.nn.hf_loader import interleave_pairs
    cfg, _ = CASES["tied_nested"]
    w = random_weights(cfg, seed=4)
    write_hf(tmp_path / "hf", cfg, w, "F32", "nested")
    permuted = dict(w, layers=[dict(layer, q=interleave_pairs(layer["q"], cfg.H),
                                    k=interleave_pairs(layer["k"], cfg.HKV))
                               for layer in w["layers"]])
    write_gguf(tmp_path / "m.gguf", cfg, permuted, "F32")
    ids = np.array([IDS], np.int32)
    a = DecoderLM.from_hf(tmp_path / "hf", queue)(ids).value.to_host()
    b = DecoderLM.from_gguf(tmp_path / "m.gguf")(ids).value.to_host()  # default
    assert np.abs(a - b).max() <= 1e-5 * np.abs(a).max()


def refused(folder, queue, match):
    with trace() as log, pytest.raises(ValueError, match=match):
        DecoderLM.from_hf(folder, queue)
    assert list(log) == [] and log.allocations == []


def folder(tmp_path, **kwargs):
    cfg = kwargs.pop("cfg", CASES["untied_top"][0])
    write_hf(tmp_path / "m", cfg, random_weights(cfg), **kwargs)
    return tmp_path / "m"


@pytest.mark.parametrize("scaling,name", [
    ({"rope_type": "llama3", "factor": 8.0}, "llama3"),
    ({"type": "linear", "factor": 2.0}, "linear"),
])
def test_rope_scaling_is_refused_by_name(tmp_path, queue, scaling, name):
    path = folder(tmp_path, extra={"rope_scaling": scaling})
    refused(path, queue, f"rope_scaling '{name}' is not supported")


def test_other_architectures_are_refused_by_name(tmp_path, queue):
    path = folder(tmp_path, extra={"architectures": ["Qwen2ForCausalLM"],
                                   "model_type": "qwen2"})
    refused(path, queue, r"architecture \['Qwen2ForCausalLM'\] is not "
                         r"supported; supported: LlamaForCausalLM")


def test_biases_are_refused(tmp_path, queue):
    refused(folder(tmp_path, extra={"attention_bias": True}), queue,
            "attention_bias is true")


def test_missing_tensor_and_wrong_shape(tmp_path, queue):
    path = folder(tmp_path, skip=("model.layers.1.mlp.up_proj.weight",))
    refused(path, queue, r"missing tensor 'model\.layers\.1\.mlp\.up_proj"
                         r"\.weight'")
    path = folder(tmp_path / "b", extra={"intermediate_size": 64})
    refused(path, queue, r"tensor 'model\.layers\.0\.mlp\.gate_proj\.weight' "
                         r"has shape \(128, 64\), the config needs \(64, 64\)")


def test_missing_config_key_and_bad_json(tmp_path, queue):
    path = folder(tmp_path)
    config = json.loads((path / "config.json").read_text())
    del config["hidden_size"]
    (path / "config.json").write_text(json.dumps(config))
    refused(path, queue, "key 'hidden_size' is missing")
    (path / "config.json").write_text("{")
    refused(path, queue, "config.json: not valid JSON")
    refused(tmp_path / "nowhere", queue, "not a folder")


def test_a_damaged_safetensors_file(tmp_path, queue):
    path = folder(tmp_path)
    data = (path / "model.safetensors").read_bytes()
    (path / "model.safetensors").write_bytes(data[:-10])
    refused(path, queue, "model.safetensors: not a readable safetensors file")


def test_unsupported_dtype_is_named(tmp_path, queue):
    from safetensors.numpy import load_file, save_file
    path = folder(tmp_path)
    arrays = load_file(str(path / "model.safetensors"))
    arrays["model.norm.weight"] = arrays["model.norm.weight"].astype(np.float64)
    save_file(arrays, str(path / "model.safetensors"))
    refused(path, queue, r"tensor 'model\.norm\.weight' has type F64, which "
                         r"is not supported")
