"""DecoderLM.from_gguf on tiny llama files written here with gguf.GGUFWriter,
in every supported type, against the numpy forward pass of
numpy_ref/llama.py over the weights the file holds (dequantised by gguf);
and crafted bad files, each refused by a ValueError that names the
problem, before any kernel runs."""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from llama_files import TYPES, Tiny, random_weights, write_gguf  # noqa: E402
from netcl_lite.core.program import trace  # noqa: E402
from netcl_lite.nn import DecoderLM, save_checkpoint  # noqa: E402
from netcl_lite.nn.decode import unsupported  # noqa: E402
from netcl_lite.nn.weights import quantised_layers  # noqa: E402
from numpy_ref.llama import llama_forward  # noqa: E402

# GQA in both; A: a tied head and a head width of its own (4 x 24 != 64),
# B: an untied head, the default width (64 / 4), one kv head
CONFIGS = {"tied_own_head_dim": Tiny(),
           "untied": Tiny(HKV=1, head_dim=16, F=128, tied=False)}
IDS = [3, 17, 5, 60, 2, 9, 41, 33, 0, 12, 7]


def reference(held, cfg, ids=IDS):
    return llama_forward(ids, held, cfg.H, cfg.HKV, cfg.head_dim, cfg.base,
                         cfg.eps)


def assert_close(got, want):
    err, top = np.abs(got - want).max(), np.abs(want).max()
    assert err <= 1e-4 * top, f"max |diff| {err:.3g} vs max |logit| {top:.3g}"


@pytest.mark.parametrize("qtype", TYPES)
@pytest.mark.parametrize("name", CONFIGS)
def test_logits_match_numpy(queue, tmp_path, qtype, name):
    cfg = CONFIGS[name]
    path = tmp_path / f"{name}.{qtype}.gguf"
    held = write_gguf(path, cfg, random_weights(cfg), qtype)
    model = DecoderLM.from_gguf(path, queue)
    c = model.config
    assert (c.dim, c.n_heads, c.n_kv_heads, c.hidden_dim, c.n_layers,
            c.vocab_size, c.max_seq_len) == (cfg.D, cfg.H, cfg.HKV, cfg.F,
                                              cfg.layers, cfg.V, cfg.context)
    assert c.tie_head == cfg.tied and c.norm_eps == pytest.approx(cfg.eps)
    assert (c.head_dim or c.dim // c.n_heads) == cfg.head_dim
    got = model(np.array([IDS], np.int32)).value.to_host()[0]     # (S, V)
    assert_close(got, reference(held, cfg))
    # Q4_0, Q4_1, Q8_0 and F16 stay in the file's format; F32 and BF16
    # become float parameters (all 7 matrices a block, the table, a head)
    quantised = quantised_layers(model)
    if qtype in ("F32", "BF16"):
        assert quantised == [] and len(model.parameters()) == \
            1 + 9 * cfg.layers + 1 + (not cfg.tied)
    else:
        assert len(quantised) == 7 * cfg.layers + 2
        assert quantised[0] == "tok_emb (QuantizedEmbedding)"
        if cfg.tied:            # one set of blocks for the table and head
            assert model.head.weight is model.tok_emb.weight


def test_generate_is_greedy_and_stops_at_the_files_end_id(queue, tmp_path):
    cfg = CONFIGS["tied_own_head_dim"]
    tokens = ([f"t{i}" for i in range(cfg.V)], [1] * cfg.V)
    tokens[0][0], tokens[1][0] = "<|endoftext|>", 3      # a control token
    held = write_gguf(tmp_path / "m.gguf", cfg, random_weights(cfg), "F32",
                      tokens=tokens)
    model = DecoderLM.from_gguf(tmp_path / "m.gguf", queue)
    assert model.stop_ids == (0, 2)     # <|endoftext|>, and eos_token_id 2
    prompt = IDS[:4]
    new = model.generate(prompt, 12, temperature=0.0, stop_ids=())
    logits = reference(held, cfg, prompt + new[:-1])    # teacher-forced
    assert new == logits[len(prompt) - 1:].argmax(axis=-1).tolist()
    # with the file's stop ids: cut after the first 0 or 2 it draws
    stops = [i for i, t in enumerate(new) if t in (0, 2)]
    want = new[:stops[0] + 1] if stops else new
    assert model.generate(prompt, 12, temperature=0.0) == want


def mask_gradient(model, H):
    """d loss / d head_mask of layer 0: it flows back through the head,
    layer 1 and layer 0's W_o to the mask (attribution needs that)."""
    import netcl_lite.autograd as ag
    from netcl_lite.core.tensor import Tensor
    with ag.Tape() as tape:
        mask = ag.tensor(Tensor.from_host(model.queue, np.ones(H)))
        loss = model.loss([IDS[:-1]], [IDS[1:]], head_mask={0: mask})
    tape.backward(loss)
    return mask.grad.to_host()


def test_a_quantised_model_passes_gradients_to_its_inputs(queue, tmp_path):
    """The same numbers, quantised (Q4_1 on the device) and as float
    parameters (F32 of the dequantised weights): equal head-mask
    gradients, though the quantised layers have no weight gradient."""
    cfg = CONFIGS["tied_own_head_dim"]
    held = write_gguf(tmp_path / "q.gguf", cfg, random_weights(cfg), "Q4_1")
    write_gguf(tmp_path / "f.gguf", cfg, held, "F32")
    quantised = DecoderLM.from_gguf(tmp_path / "q.gguf", queue)
    floats = DecoderLM.from_gguf(tmp_path / "f.gguf", queue)
    assert quantised_layers(quantised) and not quantised_layers(floats)
    got, want = mask_gradient(quantised, cfg.H), mask_gradient(floats, cfg.H)
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def test_a_quantised_model_is_refused_where_floats_are_needed(queue,
                                                              tmp_path):
    cfg = CONFIGS["untied"]
    held = write_gguf(tmp_path / "q.gguf", cfg, random_weights(cfg), "Q8_0")
    model = DecoderLM.from_gguf(tmp_path / "q.gguf", queue)
    with pytest.raises(ValueError, match=r"save_checkpoint: tok_emb "
                                         r"\(QuantizedEmbedding\) is quantised"):
        save_checkpoint(tmp_path / "c", model)
    assert unsupported(model) == ("tok_emb (QuantizedEmbedding) is quantised; "
                                  "the fused kernels read float32")
    # generate decodes layer by layer (KVCache) and agrees with numpy
    new = model.generate(IDS[:4], 8, temperature=0.0, stop_ids=())
    logits = reference(held, cfg, IDS[:4] + new[:-1])[3:]
    assert new == logits.argmax(axis=-1).tolist()


# --- bad files ------------------------------------------------------------

def good_file(tmp_path, **kwargs):
    cfg = kwargs.pop("cfg", CONFIGS["untied"])
    path = tmp_path / "model.gguf"
    write_gguf(path, cfg, random_weights(cfg), kwargs.pop("qtype", "Q8_0"),
               **kwargs)
    return path


def refused(path, queue, match):
    """from_gguf raises a ValueError matching ``match``, and no kernel ran
    nor device buffer was taken before it."""
    with trace() as log, pytest.raises(ValueError, match=match) as err:
        DecoderLM.from_gguf(path, queue)
    assert list(log) == [] and log.allocations == []
    return str(err.value)


def cut(path, length):
    data = path.read_bytes()
    path.write_bytes(data[:length])


def test_not_a_file_or_not_gguf(tmp_path, queue):
    refused(tmp_path / "absent.gguf", queue, "absent.gguf: no such file")
    (tmp_path / "empty.gguf").write_bytes(b"")
    refused(tmp_path / "empty.gguf", queue, "not a readable GGUF file: the "
                                            "header is damaged")
    path = good_file(tmp_path)
    data = bytearray(path.read_bytes())
    data[:4] = b"GGML"
    path.write_bytes(bytes(data))
    refused(path, queue, r"the header is damaged \(GGUF magic invalid\)")


def test_truncated_in_the_metadata(tmp_path, queue):
    path = good_file(tmp_path)
    field = gguf.GGUFReader(path).fields["llama.embedding_length"]
    cut(path, field.offset + 10)
    refused(path, queue, "the metadata is damaged")


def test_an_array_claiming_more_items_than_the_file_holds(tmp_path, queue):
    """A damaged length must not make the reader spin over nothing."""
    cfg = CONFIGS["untied"]
    tokens = ([f"t{i}" for i in range(cfg.V)], [1] * cfg.V)
    path = good_file(tmp_path, tokens=tokens)
    field = gguf.GGUFReader(path).fields["tokenizer.ggml.token_type"]
    count_at = field.offset + 8 + len(field.name) + 4 + 4   # key, type, item
    data = bytearray(path.read_bytes())
    data[count_at:count_at + 8] = (1 << 60).to_bytes(8, "little")
    path.write_bytes(bytes(data))
    refused(path, queue, "the metadata is damaged .*file ends at byte")


def test_truncated_in_the_tensor_table(tmp_path, queue):
    path = good_file(tmp_path)
    cut(path, gguf.GGUFReader(path).tensors[3].field.offset + 6)
    refused(path, queue, "the tensor table is damaged")


def test_tensor_data_past_the_end_of_the_file(tmp_path, queue):
    path = good_file(tmp_path)
    last = max(gguf.GGUFReader(path).tensors, key=lambda t: t.data_offset)
    cut(path, last.data_offset + last.n_bytes - 1)
    refused(path, queue, rf"the data of tensor '{last.name}' is damaged "
                         rf"\(the file ends at byte")


def test_unknown_tensor_type(tmp_path, queue):
    path = good_file(tmp_path)
    t = gguf.GGUFReader(path).tensors[0]
    type_at = t.field.offset + 8 + len(t.name) + 4 + 8 * len(t.shape)
    data = bytearray(path.read_bytes())
    data[type_at:type_at + 4] = (99).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    refused(path, queue, f"tensor '{t.name}' is damaged .*99")


def test_missing_tensor(tmp_path, queue):
    def drop(tensors):
        return [t for t in tensors if t[0] != "blk.1.ffn_up.weight"]
    path = good_file(tmp_path, edit=drop)
    refused(path, queue, r"missing tensor 'blk\.1\.ffn_up\.weight'")


def test_wrong_shape(tmp_path, queue):
    def shrink(tensors):
        return [(n, np.vstack([v, v]) if n == "blk.0.attn_k.weight" else v,
                 k) for n, v, k in tensors]
    path = good_file(tmp_path, edit=shrink)
    refused(path, queue, r"tensor 'blk\.0\.attn_k\.weight' has shape "
                         r"\(32, 64\), the config needs \(16, 64\)")


def test_unexpected_tensor(tmp_path, queue):
    def add(tensors):
        return tensors + [("rope_freqs.weight", np.ones(8, np.float32), "F32")]
    path = good_file(tmp_path, edit=add)
    refused(path, queue, "unexpected tensor 'rope_freqs.weight'")


def test_k_quants_are_refused_by_name(tmp_path, queue):
    cfg = Tiny(D=256, H=4, HKV=2, head_dim=64, F=256, layers=1, V=32)

    def to_q4_k(tensors):       # gguf has no Q4_K quantiser: zero blocks
        out = []
        for name, values, kind in tensors:
            if name == "blk.0.ffn_gate.weight":
                size = gguf.quants.quant_shape_to_byte_shape(
                    values.shape, gguf.GGMLQuantizationType.Q4_K)
                values, kind = np.zeros(size, np.uint8), "Q4_K"
            out.append((name, values, kind))
        return out
    path = tmp_path / "k.gguf"
    write_gguf(path, cfg, random_weights(cfg), "F16", edit=to_q4_k)
    message = refused(path, queue, "tensor 'blk.0.ffn_gate.weight' has type "
                                   "Q4_K, which is not supported")
    assert "supported: Q4_0, Q4_1, Q8_0, F16, BF16, F32" in message


def test_another_architecture(tmp_path, queue):
    path = good_file(tmp_path, arch="qwen2")
    refused(path, queue, "architecture 'qwen2' is not supported; supported: "
                         "llama")


def test_a_missing_key_is_named(tmp_path, queue):
    path = good_file(tmp_path, skip_keys=("llama.context_length",))
    refused(path, queue, r"metadata key 'llama\.context_length' \(the longest "
                         r"text\) is missing")


def test_rope_scaling_is_refused(tmp_path, queue):
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    refused(path, queue, r"RoPE scaling 'linear' \(llama\.rope\.scaling\.type\)"
                         r" is not supported")


def test_a_key_of_the_wrong_type_is_named(tmp_path, queue):
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_string("llama.embedding_length", "576")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    refused(path, queue, "metadata key 'llama.embedding_length' is a STRING")
