"""``read_hf(directory)``: a Hugging Face ``LlamaForCausalLM`` folder as a
``FoundModel`` (``DecoderLM.from_hf`` builds the model from it,
``nn/weights.py``).

transformers saves a model as a folder: ``config.json`` (the architecture
and its sizes), the weights in one or more ``*.safetensors`` files, and
often ``generation_config.json``. This module reads:

- the config: ``hidden_size``, ``num_hidden_layers``,
  ``num_attention_heads``, ``num_key_value_heads``, ``intermediate_size``,
  ``vocab_size``, ``rms_norm_eps``, ``max_position_embeddings``,
  ``head_dim`` when present (else hidden_size / num_attention_heads),
  ``tie_word_embeddings``, and RoPE's base ``rope_theta``, at the top level
  or under ``rope_parameters`` (transformers 5 writes it there). Missing
  optional keys take ``LlamaConfig``'s defaults;
- the weights, renamed: ``model.layers.3.self_attn.q_proj.weight`` is
  ``blocks.3.attn.wq`` (``FILE_NAMES``), each (out, in) as PyTorch keeps
  them. F32 and F16 are read with safetensors' numpy API. It has no
  bfloat16, so a BF16 tensor is read as 16-bit words (where the file's
  header puts it) and shifted into the top half of a float32;
- the ids that end generation: ``eos_token_id`` of
  ``generation_config.json``, else of ``config.json`` (an id or a list).

The RoPE layout differs. transformers turns the pairs (x[i], x[i + d/2])
of each head ("rotate half"); ``F.rope`` turns (x[2i], x[2i+1]), with the
same angle for pair i. So each head's rows of W_q and W_k are reordered on
load: output 2i takes row i, output 2i + 1 takes row i + d/2
(``interleave_pairs``). Then q and k hold the same pairs, each in its new
place, and q . k sums the same products in another order; v and W_o do not
change. (llama.cpp's converter does the same when it writes a GGUF.)

>>> w = np.arange(6.0).reshape(6, 1)      # one head of width 6: rows 0..5
>>> interleave_pairs(w, 1).ravel()        # pairs (0, 3), (1, 4), (2, 5)
array([0., 3., 1., 4., 2., 5.])

Refused, each by name: another architecture, ``rope_scaling`` (or a
``rope_type`` other than default), biases, an activation other than
silu, a dtype other than F32, F16 and BF16, and, as for GGUF, a missing
tensor or a wrong shape.

Reading needs the ``safetensors`` package (the ``models`` extra); importing
this module does not.
"""

import importlib.util
import json
import pathlib
import re

import numpy as np

from netcl_lite.nn.weights import FileTensor, FoundModel

INSTALL = "pip install 'safetensors>=0.4'  (or the project's models extra)"
ARCHITECTURES = ("LlamaForCausalLM",)
FILE_NAMES = {
    "attn_norm.weight": "input_layernorm", "attn.wq": "self_attn.q_proj",
    "attn.wk": "self_attn.k_proj", "attn.wv": "self_attn.v_proj",
    "attn.wo": "self_attn.o_proj", "ffn_norm.weight": "post_attention_layernorm",
    "ffn.w_gate": "mlp.gate_proj", "ffn.w_up": "mlp.up_proj",
    "ffn.w_down": "mlp.down_proj",
}
OUTSIDE_BLOCKS = {"tok_emb.weight": "model.embed_tokens.weight",
                  "norm.weight": "model.norm.weight",
                  "head.weight": "lm_head.weight"}
DTYPES = ("F32", "F16", "BF16")
_ABSENT = object()


def file_name(name):
    """Our parameter name -> the checkpoint's: "blocks.3.attn.wq" ->
    "model.layers.3.self_attn.q_proj.weight"."""
    if name in OUTSIDE_BLOCKS:
        return OUTSIDE_BLOCKS[name]
    _, i, rest = name.split(".", 2)
    return f"model.layers.{i}.{FILE_NAMES[rest]}.weight"


def our_name(name, n_layers):
    """The checkpoint's tensor name -> ours, or None when the model has no
    place for it."""
    for ours, theirs in OUTSIDE_BLOCKS.items():
        if name == theirs:
            return ours
    m = re.fullmatch(r"model\.layers\.(\d+)\.(.+)\.weight", name)
    if m and int(m[1]) < n_layers:
        for ours, theirs in FILE_NAMES.items():
            if m[2] == theirs:
                return f"blocks.{int(m[1])}.{ours}"
    return None


def interleave_pairs(w, n_heads):
    """Rows of W_q or W_k (n_heads * d, D), rotate-half pairs (i, i + d/2)
    -> interleaved pairs (2i, 2i + 1), head by head."""
    rows, D = w.shape
    d = rows // n_heads
    order = np.stack([np.arange(d // 2), np.arange(d // 2) + d // 2],
                     axis=1).ravel()              # 0, d/2, 1, d/2 + 1, ...
    heads = np.asarray(w).reshape(n_heads, d, D)   # (H, d, D)
    return heads[:, order, :].reshape(rows, D)     # (H d, D)


def _json(path, required):
    if not path.is_file():
        if required:
            raise ValueError(f"{path}: no such file (a Hugging Face model "
                             f"folder has config.json and *.safetensors)")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got "
                         f"{type(data).__name__}")
    return data


def _get(config, key, kind, default=_ABSENT, where="config.json"):
    """config[key], checked to be a ``kind`` (int, float, bool or str)."""
    if key not in config or config[key] is None:
        if default is _ABSENT:
            raise ValueError(f"{where}: key {key!r} is missing; the model "
                             f"needs it")
        return default
    value = config[key]
    ok = {int: isinstance(value, int) and not isinstance(value, bool),
          float: isinstance(value, (int, float)) and not isinstance(value, bool),
          bool: isinstance(value, bool), str: isinstance(value, str)}[kind]
    if not ok:
        raise ValueError(f"{where}: {key} must be a {kind.__name__}, got "
                         f"{value!r}")
    return value


def _config(c, where):
    """DecoderConfig's fields from config.json (refusing what the model
    cannot compute)."""
    archs = c.get("architectures") or []
    if not any(a in ARCHITECTURES for a in archs) and \
            not (not archs and c.get("model_type") == "llama"):
        raise ValueError(f"{where}: architecture {archs or c.get('model_type')!r}"
                         f" is not supported; supported: "
                         f"{', '.join(ARCHITECTURES)}")
    if c.get("rope_scaling"):
        kind = c["rope_scaling"]
        kind = kind.get("rope_type", kind.get("type")) \
            if isinstance(kind, dict) else kind
        raise ValueError(f"{where}: rope_scaling {kind!r} is not supported "
                         f"(the model turns q and k by plain RoPE)")
    rope = c.get("rope_parameters") or {}
    if not isinstance(rope, dict):
        raise ValueError(f"{where}: rope_parameters must be an object, got "
                         f"{rope!r}")
    if rope.get("rope_type", "default") != "default":
        raise ValueError(f"{where}: rope_parameters.rope_type "
                         f"{rope['rope_type']!r} is not supported (RoPE "
                         f"scaling); supported: default")
    act = _get(c, "hidden_act", str, "silu")
    if act != "silu":
        raise ValueError(f"{where}: hidden_act {act!r} is not supported; "
                         f"supported: silu (SwiGLU)")
    for bias in ("attention_bias", "mlp_bias"):
        if _get(c, bias, bool, False):
            raise ValueError(f"{where}: {bias} is true; the model has no "
                             f"biases")
    dim = _get(c, "hidden_size", int)
    n_heads = _get(c, "num_attention_heads", int)
    head_dim = _get(c, "head_dim", int, 0)
    if head_dim and n_heads > 0 and head_dim * n_heads == dim:
        head_dim = 0                               # the default width
    theta = rope.get("rope_theta", _get(c, "rope_theta", float, 10000.0))
    return dict(
        vocab_size=_get(c, "vocab_size", int), dim=dim,
        n_layers=_get(c, "num_hidden_layers", int), n_heads=n_heads,
        n_kv_heads=_get(c, "num_key_value_heads", int, n_heads),
        max_seq_len=_get(c, "max_position_embeddings", int, 2048),
        hidden_dim=_get(c, "intermediate_size", int),
        rope_base=_get({"rope_theta": theta}, "rope_theta", float),
        norm_eps=_get(c, "rms_norm_eps", float, 1e-6),
        head_dim=head_dim,
        tie_head=_get(c, "tie_word_embeddings", bool, False))


def _stop_ids(folder, config):
    """eos_token_id of generation_config.json, else of config.json."""
    where = folder / "generation_config.json"
    generation = _json(where, required=False)
    if generation.get("eos_token_id") is None:
        generation, where = config, folder / "config.json"
    ids = generation.get("eos_token_id")
    ids = [] if ids is None else ids if isinstance(ids, list) else [ids]
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0
               for i in ids):
        raise ValueError(f"{where}: eos_token_id must be an id or a list of "
                         f"ids, got {generation.get('eos_token_id')!r}")
    return tuple(sorted(set(ids)))


def _bf16(path, name, shape):
    """A BF16 tensor as uint16 words, memory-mapped where the header puts
    it: 8 bytes of header length, the JSON header, then the data, each
    tensor at its data_offsets."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    start, end = header[name]["data_offsets"]
    return np.memmap(path, np.uint16, "r", offset=8 + n + start,
                     shape=tuple(shape))


def _reader(path, name):
    """A function that reads one F32 or F16 tensor with safetensors' numpy
    API when called: the weights pass through memory one at a time."""
    def read():
        from safetensors import safe_open          # only when reading
        with safe_open(str(path), framework="np") as f:
            return f.get_tensor(name)
    return read


def _interleaved(data, heads):
    """``data`` (an array or a function reading it) with its rows turned
    from rotate-half pairs to interleaved ones, when read."""
    return lambda: interleave_pairs(data() if callable(data) else data, heads)


def _read_tensors(files):
    """{name: FileTensor} from every *.safetensors file (the table only:
    the values are read when the model is filled)."""
    from safetensors import SafetensorError, safe_open  # only when reading
    found = {}
    for path in files:
        try:
            with safe_open(str(path), framework="np") as f:
                for name in f.keys():
                    if name in found:
                        raise ValueError(f"{path}: tensor {name!r} is also "
                                         f"in {found[name][0]}")
                    part = f.get_slice(name)
                    dtype, shape = part.get_dtype(), tuple(part.get_shape())
                    if dtype not in DTYPES:
                        data = None              # refused by check_tensors
                    elif dtype == "BF16":
                        data = _bf16(path, name, shape)
                    else:
                        data = _reader(path, name)
                    found[name] = (path, FileTensor(name, dtype, shape, data))
        except (SafetensorError, OSError) as err:
            raise ValueError(f"{path}: not a readable safetensors file "
                             f"({err})") from None
    return {name: t for name, (_, t) in found.items()}


def read_hf(directory):
    """Read a transformers model folder -> FoundModel; see the module
    docstring."""
    if importlib.util.find_spec("safetensors") is None:
        raise ImportError(f"reading safetensors needs the safetensors "
                          f"package: {INSTALL}")
    folder = pathlib.Path(directory)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder (a Hugging Face model "
                         f"folder has config.json and *.safetensors)")
    raw = _json(folder / "config.json", required=True)
    config = _config(raw, str(folder / "config.json"))
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ValueError(f"{folder}: no *.safetensors file")
    tensors, unexpected = {}, []
    for name, t in _read_tensors(files).items():
        if name.endswith("rotary_emb.inv_freq"):   # a buffer old files keep
            continue
        ours = our_name(name, config["n_layers"])
        if ours == "head.weight" and config["tie_head"]:
            continue             # tied: the head is the embedding, as in torch
        if ours is None:
            unexpected.append(name)
        else:
            tensors[ours] = t
    H, HKV = config["n_heads"], config["n_kv_heads"]
    d = config["head_dim"] or (config["dim"] // H if H > 0 else 0)
    for i in range(config["n_layers"]):
        for name, heads in ((f"blocks.{i}.attn.wq", H), (f"blocks.{i}.attn.wk", HKV)):
            t = tensors.get(name)
            # a wrong shape is left for check_tensors to name
            if t is not None and t.data is not None and heads > 0 and \
                    d % 2 == 0 and t.shape == (heads * d, config["dim"]):
                t.data = _interleaved(t.data, heads)
    return FoundModel(source=str(folder), config=config, tensors=tensors,
                      file_name=file_name, unexpected=unexpected,
                      stop_ids=_stop_ids(folder, raw))
