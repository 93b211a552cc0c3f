"""Checkpoints: the weights in ``<stem>.npz`` and the config in ``<stem>.json``
(chapter 09). Nothing is pickled: loading never runs code from the file.

    <stem>.json  {"format": "netcl_lite.checkpoint", "version": 1,
                  "model": "DecoderLM", "config": {...},
                  "tensors": {"tok_emb.weight": [V, D], ...}, "extra": {...}}
    <stem>.npz   one float32 array per parameter, named as in
                 ``model.named_parameters()``

>>> import os, tempfile
>>> from netcl_lite.core.device import manager
>>> from netcl_lite.nn.model import DecoderConfig, DecoderLM
>>> queue = manager.default("cpu").queue
>>> model = DecoderLM(queue, DecoderConfig(vocab_size=16, dim=8, n_layers=1,
...                                    n_heads=2, n_kv_heads=1, max_seq_len=4))
>>> tmp = tempfile.TemporaryDirectory()
>>> stem = os.path.join(tmp.name, "tiny")
>>> save_checkpoint(stem, model, extra={"step": 10})
>>> sorted(os.listdir(tmp.name))
['tiny.json', 'tiny.npz']
>>> again, extra = load_checkpoint(stem, queue)
>>> extra, again.config == model.config
({'step': 10}, True)
>>> tmp.cleanup()

Every problem (missing or unexpected tensor, a shape that does not match
the config, a malformed, truncated or foreign file, another version) raises
a ValueError naming it, before any weight of the model changes.

A model with quantised weights (read from a GGUF file) cannot be saved: a
checkpoint holds float parameters, and its quantised layers have none.
``save_checkpoint`` names the first such layer. Older checkpoints, written
before ``head_dim`` and ``tie_head`` existed, load with their defaults.

A crafted file costs no more than an honest one: the shapes the config
implies are checked against the shapes in the ``.npy`` headers inside the
``.npz`` (a few bytes each) before the model is built or any array is
decompressed. So a config claiming vocab_size = 3,000,000 next to small
weights, or a small compressed file declaring a huge tensor, fails at once.
"""

import json
import pathlib
import zipfile
import zlib

import numpy as np

from netcl_lite.core.tensor import Tensor
from netcl_lite.nn.model import DecoderConfig, DecoderLM
from netcl_lite.nn.weights import quantised_layers

FORMAT, VERSION = "netcl_lite.checkpoint", 1


def _paths(path):
    """"run/ckpt", "run/ckpt.npz" or "run/ckpt.json" -> both file paths."""
    path = pathlib.Path(path)
    if path.suffix in (".npz", ".json"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".npz"), path.with_name(path.name + ".json")


def save_checkpoint(path, model, extra=None):
    """Write <stem>.npz (weights) and <stem>.json (config, shapes, extra)."""
    quantised = quantised_layers(model)
    if quantised:
        raise ValueError(f"save_checkpoint: {quantised[0]} is quantised "
                         f"({len(quantised)} quantised layers); a checkpoint "
                         f"holds float parameters only")
    npz, meta = _paths(path)
    arrays = {name: p.value.to_host() for name, p in model.named_parameters()}
    header = {
        "format": FORMAT, "version": VERSION, "model": type(model).__name__,
        "config": model.config.to_dict(),
        "tensors": {name: list(a.shape) for name, a in arrays.items()},
        "extra": {} if extra is None else extra,
    }
    text = json.dumps(header, indent=1)   # fails early on extra it cannot store
    npz.parent.mkdir(parents=True, exist_ok=True)
    np.savez(npz, **arrays)
    meta.write_text(text + "\n", encoding="utf-8")


def read_header(path):
    """The JSON half, checked: format, version and model name."""
    _, meta = _paths(path)
    try:
        header = json.loads(meta.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"checkpoint {meta}: not valid JSON ({err})") from None
    except RecursionError:
        raise ValueError(f"checkpoint {meta}: JSON nested too deeply") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"checkpoint {meta}: not a {FORMAT} file")
    if header.get("version") != VERSION:
        raise ValueError(
            f"checkpoint {meta}: version {header.get('version')!r} is not "
            f"supported (this library reads version {VERSION})"
        )
    if header.get("model") != "DecoderLM":
        raise ValueError(f"checkpoint {meta}: unknown model {header.get('model')!r}")
    return header


def expected_shapes(config):
    """{parameter name: shape} of ``DecoderLM(queue, config)``, without
    building it (tests/nn/test_checkpoint.py checks that the two agree)."""
    c = config
    hd = c.head_dim or c.dim // c.n_heads
    if (not c.head_dim and c.dim % c.n_heads) or c.n_heads % c.n_kv_heads \
            or hd % 2:
        raise ValueError(
            f"dim {c.dim}, n_heads {c.n_heads}, n_kv_heads {c.n_kv_heads}, "
            f"head_dim {c.head_dim}: need dim % n_heads == 0 (unless head_dim "
            "is given), n_heads % n_kv_heads == 0 and an even head dim"
        )
    D, HID = c.dim, c.hidden_dim
    q, kv = c.n_heads * hd, c.n_kv_heads * hd
    shapes = {"tok_emb.weight": (c.vocab_size, D)}
    for i in range(c.n_layers):
        block = {
            "attn_norm.weight": (D,), "attn.wq": (D, q), "attn.wk": (D, kv),
            "attn.wv": (D, kv), "attn.wo": (q, D), "ffn_norm.weight": (D,),
            "ffn.w_gate": (D, HID), "ffn.w_up": (D, HID), "ffn.w_down": (HID, D),
        }
        if c.attn_only:                         # no MLP: no ffn weights
            block = {k: v for k, v in block.items() if not k.startswith("ffn")}
        shapes.update({f"blocks.{i}.{k}": v for k, v in block.items()})
    shapes["norm.weight"] = (D,)
    if not c.tie_head:          # tied: the head reads tok_emb.weight
        shapes["head.weight"] = (D, c.vocab_size)
    return shapes


_FLOATS = ("<f2", "<f4", "<f8", ">f2", ">f4", ">f8")
_BROKEN = (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError)


def npz_shapes(npz):
    """{name: (shape, dtype)} from the ``.npy`` headers of an ``.npz``,
    reading a few hundred bytes per array, never the data."""
    try:
        with zipfile.ZipFile(npz) as archive:
            found = {}
            for info in archive.infolist():
                name = info.filename.removesuffix(".npy")
                with archive.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    read = (np.lib.format.read_array_header_1_0
                            if version == (1, 0)
                            else np.lib.format.read_array_header_2_0)
                    shape, fortran, dtype = read(f)
                if dtype.str not in _FLOATS or fortran:
                    raise ValueError(
                        f"tensor {name!r} has dtype {dtype} (order "
                        f"{'F' if fortran else 'C'}); need C-ordered float16, "
                        "float32 or float64"
                    )
                found[name] = (tuple(shape), dtype)
            return found
    except _BROKEN as err:
        raise ValueError(f"checkpoint {npz}: not a readable .npz ({err!r})") \
            from None
    except ValueError as err:
        raise ValueError(f"checkpoint {npz}: {err}") from None


def check_shapes(npz, expected):
    """Missing, unexpected or misshapen tensors -> ValueError naming one."""
    found = npz_shapes(npz)
    missing = [name for name in expected if name not in found]
    if missing:
        raise ValueError(f"checkpoint {npz}: missing tensor {missing[0]!r}"
                         f" ({len(missing)} missing)")
    unexpected = [name for name in found if name not in expected]
    if unexpected:
        raise ValueError(f"checkpoint {npz}: unexpected tensor "
                         f"{unexpected[0]!r}")
    for name, shape in expected.items():
        if found[name][0] != tuple(shape):
            raise ValueError(
                f"checkpoint {npz}: tensor {name!r} has shape {found[name][0]}, "
                f"the model expects {tuple(shape)}"
            )


def load_weights(model, path):
    """Copy <stem>.npz into model's parameters; all checks come first."""
    npz, _ = _paths(path)
    params = dict(model.named_parameters())
    check_shapes(npz, {name: p.shape for name, p in params.items()})
    arrays = {}
    try:
        with np.load(npz, allow_pickle=False) as data:
            for name, p in params.items():
                a = data[name]
                with np.errstate(over="ignore"):
                    a32 = a.astype(np.float32)
                if not np.isfinite(a32).all():   # 1e300 in float64 is inf here
                    raise ValueError(
                        f"tensor {name!r} must hold finite floats that fit in "
                        f"float32, got dtype {a.dtype} with "
                        f"{int((~np.isfinite(a32)).sum())} that do not"
                    )
                arrays[name] = a32
    except _BROKEN as err:
        raise ValueError(f"checkpoint {npz}: not a readable .npz ({err!r})") \
            from None
    except ValueError as err:
        raise ValueError(f"checkpoint {npz}: {err}") from None
    for name, p in params.items():
        p.value = Tensor.from_host(p.queue, arrays[name])
    return model


def load_checkpoint(path, queue):
    """Build the model from the JSON config, load its weights.

    Returns (model, extra)."""
    header = read_header(path)
    try:
        config = DecoderConfig.from_dict(header.get("config"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"checkpoint {_paths(path)[1]}: bad config ({err})") \
            from None
    try:
        shapes = expected_shapes(config)
    except ValueError as err:
        raise ValueError(f"checkpoint {_paths(path)[1]}: bad config ({err})") \
            from None
    check_shapes(_paths(path)[0], shapes)   # before the model takes memory
    model = DecoderLM(queue, config)
    load_weights(model, path)
    return model, header.get("extra", {})

