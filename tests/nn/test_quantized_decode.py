"""QuantizedDecoder (inference/quantized_decoder.py, kernels/decode_quant.cl):
fused decoding of a model whose matrices stay in GGUF blocks, on tiny llama
files written here, against the numpy forward pass of numpy_ref/llama.py
over the weights the file holds, and against the layer-by-layer path
(``decode.ENABLED = False``) of the same model: greedy tokens identical."""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from llama_files import Tiny, random_weights, write_gguf  # noqa: E402
from netcl_lite.core.program import trace  # noqa: E402
from netcl_lite.inference import quantized_decoder  # noqa: E402
from netcl_lite.nn import DecoderLM, decode  # noqa: E402
from netcl_lite.nn.kv_cache import KVCache  # noqa: E402
from numpy_ref.llama import llama_forward  # noqa: E402

# head_dim 24 takes decode.cl's scalar attention, 16 decode_quant.cl's
CONFIGS = {"tied_own_head_dim": Tiny(),
           "untied": Tiny(HKV=1, head_dim=16, F=128, tied=False)}
QTYPES = ["Q4_0", "Q4_1", "Q8_0", "F16"]
PROMPT = [3, 17, 5, 60]


def model_of(tmp_path, queue, name, qtype):
    cfg = CONFIGS[name]
    path = tmp_path / f"{name}.{qtype}.gguf"
    held = write_gguf(path, cfg, random_weights(cfg), qtype)
    return cfg, held, DecoderLM.from_gguf(path, queue)


def reference(held, cfg, ids):
    return llama_forward(ids, held, cfg.H, cfg.HKV, cfg.head_dim, cfg.base,
                         cfg.eps)                                # (S, V)


@pytest.mark.parametrize("qtype", QTYPES)
@pytest.mark.parametrize("name", CONFIGS)
def test_steps_match_numpy_and_the_layer_by_layer_path(queue, tmp_path, name,
                                                       qtype, monkeypatch):
    cfg, held, model = model_of(tmp_path, queue, name, qtype)
    assert decode.quantized_unsupported(model) is None
    assert decode.fused_decoding(model)
    with trace() as ran:
        fast = model.generate(PROMPT, 12, temperature=0.0, stop_ids=())
    assert "decode_quant.cl:qdecode_qkv" in ran     # the fused path ran
    want = reference(held, cfg, PROMPT + fast[:-1])[len(PROMPT) - 1:]
    assert fast == want.argmax(axis=-1).tolist()
    monkeypatch.setattr(decode, "ENABLED", False)
    with trace() as ran:
        slow = model.generate(PROMPT, 12, temperature=0.0, stop_ids=())
    assert "decode_quant.cl:qdecode_qkv" not in ran
    assert fast == slow
    # each step's logits, teacher-forced, against numpy
    cache = KVCache(cfg.layers)
    model(np.array([PROMPT], np.int32), cache)
    steps = decode.QuantizedDecoder(model, 1)
    steps.start(cache)
    got = np.stack([steps.step([t])[0] for t in fast])        # (12, V)
    want = reference(held, cfg, PROMPT + fast)[len(PROMPT):]
    err, top = np.abs(got - want).max(), np.abs(want).max()
    assert err <= 1e-4 * top, f"max |diff| {err:.3g} vs max |logit| {top:.3g}"


def test_the_cache_grows_with_the_text(queue, tmp_path, monkeypatch):
    """From room for 2 (P + 1) positions, doubling when full, up to the
    positions asked for; the rows already cached survive each copy."""
    monkeypatch.setattr(quantized_decoder, "MIN_POSITIONS", 1)
    cfg, held, model = model_of(tmp_path, queue, "untied", "Q8_0")
    cache = KVCache(cfg.layers)
    model(np.array([PROMPT], np.int32), cache)
    steps = decode.QuantizedDecoder(model, 1, positions=40)
    steps.start(cache)
    sizes, ids = [steps.T], list(range(5, 35))
    logits = []
    for t in ids:
        logits.append(steps.step([t])[0])
        sizes.append(steps.T)
    assert sorted(set(sizes)) == [10, 20, 40]
    assert steps.caches[0][0].shape == (1, cfg.HKV, 40, cfg.head_dim)
    want = reference(held, cfg, PROMPT + ids)[len(PROMPT):]
    got = np.stack(logits)
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
    with pytest.raises(ValueError, match="position 34 is past max_seq_len 34"):
        long = decode.QuantizedDecoder(model, 1, positions=34)
        long.start(cache)
        for t in ids + [1]:
            long.step([t])


def test_a_batch_decodes_each_row_as_alone(queue, tmp_path):
    cfg, held, model = model_of(tmp_path, queue, "untied", "Q4_1")
    prompts = np.array([PROMPT, [9, 1, 44, 2]], np.int32)     # (B, P)
    both = model.generate(prompts, 6, temperature=0.0, stop_ids=())
    for row, new in zip(prompts.tolist(), both):
        assert new == model.generate(row, 6, temperature=0.0, stop_ids=())


def test_a_model_with_a_float_matrix_is_not_taken(queue, tmp_path):
    cfg, held, model = model_of(tmp_path, queue, "untied", "F32")
    assert decode.quantized_unsupported(model) == \
        "tok_emb is a Embedding, not a QuantizedEmbedding"
    with pytest.raises(ValueError, match="QuantizedDecoder: tok_emb is a"):
        decode.QuantizedDecoder(model, 1)
    assert type(decode.decoder_for(model, 1)).__name__ == "FusedDecoder"
