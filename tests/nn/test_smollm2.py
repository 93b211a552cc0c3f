"""SmolLM2-135M-Instruct, the real GGUF file (the ``smollm2_path`` fixture:
skipped without it, required where COURSE_REQUIRE_SMOLLM2=1), read by
DecoderLM.from_gguf, against numpy_ref/llama.py over the weights as gguf
dequantises them, computed in float32:

- logits on three named prompts (smollm2/prompts.json, tokenized by
  transformers; one is over 300 tokens): max |difference| <= 1e-4 x max
  |reference logit|;
- greedy decoding on a ChatML question, 24 tokens, each the reference's
  argmax at its position (the reference reads the same tokens, teacher
  forced), and the answer as text.
"""

import json
import pathlib

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from netcl_lite.nn import DecoderLM  # noqa: E402
from numpy_ref.llama import llama_forward  # noqa: E402

PROMPTS = json.loads((pathlib.Path(__file__).parent / "smollm2" /
                      "prompts.json").read_text(encoding="utf-8"))
TOLERANCE = 1e-4           # x max |reference logit|


@pytest.fixture(scope="module")
def gguf_file(smollm2_path):
    return gguf.GGUFReader(smollm2_path)


@pytest.fixture(scope="module")
def model(smollm2_path, queue):
    return DecoderLM.from_gguf(smollm2_path, queue)


@pytest.fixture(scope="module")
def reference(gguf_file):
    """ids -> float32 logits (S, V), from the file's metadata and weights
    as the test reads them itself."""
    f = {k: v.contents() for k, v in gguf_file.fields.items()
         if k.startswith("llama.")}
    w = {}
    for t in gguf_file.tensors:
        shape = tuple(int(n) for n in reversed(t.shape.tolist()))
        w[t.name] = gguf.quants.dequantize(t.data, t.tensor_type).reshape(shape)
    names = {"attn_norm": "attn_norm", "q": "attn_q", "k": "attn_k",
             "v": "attn_v", "o": "attn_output", "ffn_norm": "ffn_norm",
             "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down"}
    layers = [{k: w[f"blk.{i}.{n}.weight"] for k, n in names.items()}
              for i in range(f["llama.block_count"])]
    weights = dict(emb=w["token_embd.weight"], norm=w["output_norm.weight"],
                   head=w.get("output.weight"), layers=layers)
    H = f["llama.attention.head_count"]

    def run(ids):
        return llama_forward(
            ids, weights, H, f["llama.attention.head_count_kv"],
            f["llama.embedding_length"] // H, f["llama.rope.freq_base"],
            f["llama.attention.layer_norm_rms_epsilon"], dtype=np.float32)
    return run


def test_the_config_comes_from_the_metadata(model):
    c = model.config
    assert (c.vocab_size, c.dim, c.n_layers, c.n_heads, c.n_kv_heads,
            c.hidden_dim, c.max_seq_len) == (49152, 576, 30, 9, 3, 1536, 8192)
    assert c.tie_head and c.rope_base == 100000.0
    assert model.stop_ids == (0, 2)      # <|endoftext|>, <|im_end|>


def test_three_prompts_one_over_300_tokens(model, reference):
    assert max(len(p["ids"]) for p in PROMPTS.values()) > 300
    for name, prompt in PROMPTS.items():
        ids = prompt["ids"]
        got = model(np.array([ids], np.int32)).value.to_host()[0]    # (S, V)
        want = reference(ids)
        err, top = np.abs(got - want).max(), np.abs(want).max()
        assert err <= TOLERANCE * top, (
            f"{name} ({len(ids)} tokens): max |diff| {err:.3g}, max |logit| "
            f"{top:.3g}")


def decode(gguf_file, ids):
    """The text of ids: byte-level BPE tokens spell bytes with printable
    characters (GPT-2's table); map them back."""
    tokens = gguf_file.fields["tokenizer.ggml.tokens"]
    printable = list(range(33, 127)) + list(range(161, 173)) + \
        list(range(174, 256))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    text = "".join(tokens.contents(i) for i in ids)
    return bytes(chars[c] for c in text).decode("utf-8", "replace")


def test_greedy_answer_token_for_token(model, reference, gguf_file):
    prompt = PROMPTS["chatml_capital"]["ids"]
    new = model.generate(prompt, 24, temperature=0.0, stop_ids=())
    logits = reference(prompt + new[:-1])[len(prompt) - 1:]          # (24, V)
    assert new == logits.argmax(axis=-1).tolist()
    answer = decode(gguf_file, new)
    assert answer.startswith("The capital of France is Paris.<|im_end|>"), \
        answer
    # with the file's stop ids the answer ends at <|im_end|> (id 2)
    stopped = model.generate(prompt, 24, temperature=0.0)
    assert stopped == new[:new.index(2) + 1]
