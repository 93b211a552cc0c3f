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
the config, a malformed or foreign JSON file, another version) raises a
ValueError naming it, before any weight of the model changes.
"""

import json
import pathlib

import numpy as np

from netcl_lite.core.tensor import Tensor
from netcl_lite.nn.model import DecoderConfig, DecoderLM

FORMAT, VERSION = "netcl_lite.checkpoint", 1


def _paths(path):
    """"run/ckpt", "run/ckpt.npz" or "run/ckpt.json" -> both file paths."""
    path = pathlib.Path(path)
    if path.suffix in (".npz", ".json"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".npz"), path.with_name(path.name + ".json")


def save_checkpoint(path, model, extra=None):
    """Write <stem>.npz (weights) and <stem>.json (config, shapes, extra)."""
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


def load_weights(model, path):
    """Copy <stem>.npz into model's parameters; all checks come first."""
    npz, _ = _paths(path)
    params = dict(model.named_parameters())
    arrays = {}
    with np.load(npz, allow_pickle=False) as data:
        missing = [name for name in params if name not in data.files]
        if missing:
            raise ValueError(f"checkpoint {npz}: missing tensor {missing[0]!r}"
                             f" ({len(missing)} missing)")
        unexpected = [name for name in data.files if name not in params]
        if unexpected:
            raise ValueError(f"checkpoint {npz}: unexpected tensor "
                             f"{unexpected[0]!r}")
        for name, p in params.items():
            try:
                a = data[name]
            except ValueError as err:   # e.g. an object array (needs pickle)
                raise ValueError(f"checkpoint {npz}: tensor {name!r}: {err}") \
                    from None
            if a.shape != p.shape:
                raise ValueError(
                    f"checkpoint {npz}: tensor {name!r} has shape {a.shape}, "
                    f"the model expects {p.shape}"
                )
            if a.dtype.kind != "f" or not np.isfinite(a).all():
                raise ValueError(
                    f"checkpoint {npz}: tensor {name!r} must hold finite floats, "
                    f"got dtype {a.dtype}"
                )
            arrays[name] = a.astype(np.float32)
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
    model = DecoderLM(queue, config)
    load_weights(model, path)
    return model, header.get("extra", {})

