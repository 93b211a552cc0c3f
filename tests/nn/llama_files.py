"""Tiny llama models written as files by the tests: a GGUF file (with
``gguf.GGUFWriter``) and a Hugging Face folder (config.json and
safetensors), from random weights, plus the weights the file really holds
(after quantisation) for the numpy reference (numpy_ref/llama.py)."""

import dataclasses
import json

import numpy as np

TYPES = ["Q4_0", "Q4_1", "Q8_0", "F16", "BF16", "F32"]
MATRICES = ("q", "k", "v", "o", "gate", "up", "down")
GGUF_NAMES = {"attn_norm": "attn_norm", "q": "attn_q", "k": "attn_k",
              "v": "attn_v", "o": "attn_output", "ffn_norm": "ffn_norm",
              "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down"}
HF_NAMES = {"attn_norm": "input_layernorm", "q": "self_attn.q_proj",
            "k": "self_attn.k_proj", "v": "self_attn.v_proj",
            "o": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
            "gate": "mlp.gate_proj", "up": "mlp.up_proj",
            "down": "mlp.down_proj"}


@dataclasses.dataclass
class Tiny:
    """The sizes of a tiny llama; every matrix width a multiple of 32, as
    the block types need."""
    V: int = 64
    D: int = 64
    H: int = 4
    HKV: int = 2
    head_dim: int = 24           # its own: H * head_dim = 96 != D
    F: int = 96
    layers: int = 2
    tied: bool = True
    base: float = 10000.0
    eps: float = 1e-5
    context: int = 64


def random_weights(cfg, seed=0):
    """Weights (out, in) as files store them, float32, with a spread like
    a trained model's (norm gains near 1, matrices ~ 1/sqrt(fan-in))."""
    rng = np.random.default_rng(seed)

    def matrix(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(
            np.float32)

    def gain(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    q, kv = cfg.H * cfg.head_dim, cfg.HKV * cfg.head_dim
    layers = [dict(attn_norm=gain(cfg.D), q=matrix(q, cfg.D),
                   k=matrix(kv, cfg.D), v=matrix(kv, cfg.D), o=matrix(cfg.D, q),
                   ffn_norm=gain(cfg.D), gate=matrix(cfg.F, cfg.D),
                   up=matrix(cfg.F, cfg.D), down=matrix(cfg.D, cfg.F))
              for _ in range(cfg.layers)]
    return dict(emb=rng.standard_normal((cfg.V, cfg.D)).astype(np.float32),
                norm=gain(cfg.D), layers=layers,
                head=None if cfg.tied else matrix(cfg.V, cfg.D))


def stored(array, qtype):
    """(what to hand GGUFWriter, its raw type or None, the values the file
    then holds, as float32)."""
    import gguf
    kind = gguf.GGMLQuantizationType[qtype]
    if array.dtype == np.uint8:            # blocks' bytes, written as they are
        return array, kind, None
    if qtype == "F32":
        return array, None, array
    if qtype == "F16":
        half = array.astype(np.float16)
        return half, None, half.astype(np.float32)
    raw = gguf.quants.quantize(array, kind)
    return raw, kind, gguf.quants.dequantize(raw, kind).reshape(array.shape)


def gguf_tensors(weights, qtype):
    """[(file name, float32 values)] in the file's names; the matrices and
    the embedding in ``qtype``, the norms F32."""
    out = [("token_embd.weight", weights["emb"], qtype)]
    for i, layer in enumerate(weights["layers"]):
        for key, name in GGUF_NAMES.items():
            kind = qtype if key in MATRICES else "F32"
            out.append((f"blk.{i}.{name}.weight", layer[key], kind))
    out.append(("output_norm.weight", weights["norm"], "F32"))
    if weights["head"] is not None:
        out.append(("output.weight", weights["head"], qtype))
    return out


def write_gguf(path, cfg, weights, qtype, arch="llama", skip_keys=(),
               edit=None, tokens=None):
    """Write the file; return the weights it holds (dequantised), in the
    reference's layout. ``edit(list of (name, values, type))`` may change
    the tensor list first; ``skip_keys`` leaves metadata keys out."""
    import gguf
    w = gguf.GGUFWriter(str(path), arch)
    a = arch + "."
    keys = {
        "block_count": lambda: w.add_block_count(cfg.layers),
        "context_length": lambda: w.add_context_length(cfg.context),
        "embedding_length": lambda: w.add_embedding_length(cfg.D),
        "feed_forward_length": lambda: w.add_feed_forward_length(cfg.F),
        "attention.head_count": lambda: w.add_head_count(cfg.H),
        "attention.head_count_kv": lambda: w.add_head_count_kv(cfg.HKV),
        "rope.freq_base": lambda: w.add_rope_freq_base(cfg.base),
        "attention.layer_norm_rms_epsilon":
            lambda: w.add_layer_norm_rms_eps(cfg.eps),
        "vocab_size": lambda: w.add_vocab_size(cfg.V),
        "attention.key_length": lambda: w.add_key_length(cfg.head_dim),
        "attention.value_length": lambda: w.add_value_length(cfg.head_dim),
        "rope.dimension_count":
            lambda: w.add_rope_dimension_count(cfg.head_dim),
    }
    for key, add in keys.items():
        if a + key not in skip_keys:
            add()
    w.add_eos_token_id(2)
    if tokens is not None:                 # (texts, types): for stop ids
        w.add_token_list(tokens[0])
        w.add_token_types(tokens[1])
    tensors = gguf_tensors(weights, qtype)
    if edit is not None:
        tensors = edit(tensors)
    held = {}
    for name, values, kind in tensors:
        data, raw, held[name] = stored(values, kind)
        w.add_tensor(name, data, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return held_weights(held, weights, GGUF_NAMES, "token_embd.weight",
                        "output_norm.weight", "output.weight",
                        lambda i, n: f"blk.{i}.{n}.weight")


def held_weights(held, like, names, emb, norm, head, block):
    """{file name: values} -> the reference's dict (None where absent)."""
    layers = [{key: held.get(block(i, name)) for key, name in names.items()}
              for i in range(len(like["layers"]))]
    return dict(emb=held.get(emb), norm=held.get(norm), layers=layers,
                head=held.get(head) if like["head"] is not None else None)


def to_bf16(array):
    """float32 -> bfloat16 bits (uint16), rounded to nearest even, and the
    float32 values they stand for."""
    bits = np.asarray(array, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


def write_hf(folder, cfg, weights, dtype="F32", rope_key="top", extra=None,
             eos=(2,), skip=()):
    """A LlamaForCausalLM folder: config.json (rope_theta at the top level,
    or under rope_parameters with rope_key="nested"), model.safetensors in
    ``dtype`` (F32, F16 or BF16; BF16 written as the format stores it), and
    generation_config.json. Returns the weights as the file holds them."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": cfg.D, "intermediate_size": cfg.F,
        "num_attention_heads": cfg.H, "num_key_value_heads": cfg.HKV,
        "num_hidden_layers": cfg.layers, "vocab_size": cfg.V,
        "max_position_embeddings": cfg.context, "rms_norm_eps": cfg.eps,
        "hidden_act": "silu", "tie_word_embeddings": cfg.tied,
        "head_dim": cfg.head_dim, "rope_scaling": None,
        "torch_dtype": {"F32": "float32", "F16": "float16",
                        "BF16": "bfloat16"}[dtype],
    }
    if rope_key == "top":
        config["rope_theta"] = cfg.base
    else:
        config["rope_parameters"] = {"rope_theta": cfg.base,
                                     "rope_type": "default"}
    config.update(extra or {})
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "generation_config.json").write_text(
        json.dumps({"eos_token_id": list(eos), "bos_token_id": 1}))
    named = [("model.embed_tokens.weight", weights["emb"]),
             ("model.norm.weight", weights["norm"])]
    for i, layer in enumerate(weights["layers"]):
        named += [(f"model.layers.{i}.{n}.weight", layer[k])
                  for k, n in HF_NAMES.items()]
    if weights["head"] is not None:
        named.append(("lm_head.weight", weights["head"]))
    named = [(n, v) for n, v in named if n not in skip]
    held = {}
    if dtype == "BF16":
        write_bf16(folder / "model.safetensors",
                   {n: to_bf16(v)[0] for n, v in named})
        held = {n: to_bf16(v)[1] for n, v in named}
    else:
        from safetensors.numpy import save_file
        np_dtype = np.float32 if dtype == "F32" else np.float16
        arrays = {n: np.ascontiguousarray(v, np_dtype) for n, v in named}
        save_file(arrays, str(folder / "model.safetensors"))
        held = {n: a.astype(np.float32) for n, a in arrays.items()}
    return held_weights(held, weights, HF_NAMES, "model.embed_tokens.weight",
                        "model.norm.weight", "lm_head.weight",
                        lambda i, n: f"model.layers.{i}.{n}.weight")


def write_bf16(path, arrays):
    """A safetensors file of BF16 tensors (safetensors' numpy API cannot
    write them): 8 bytes of header length, the JSON header, the data."""
    header, offset, blobs = {}, 0, []
    for name, bits in arrays.items():
        blob = np.ascontiguousarray(bits, "<u2").tobytes()
        header[name] = {"dtype": "BF16", "shape": list(bits.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
