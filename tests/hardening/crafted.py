"""Write a corpus of crafted (hostile or broken) checkpoint and tokenizer files.

Each maker writes its files into a folder and returns the path to load. The
files are generated rather than stored: one of them is a 1 GiB tensor that
compresses to about a megabyte. ``python tests/hardening/crafted.py DIR``
writes them all to DIR for a look by hand.
"""

import json
import pathlib
import sys
import zipfile

import numpy as np

# A tiny model's config and the shapes of its weights (see expected_shapes).
CONFIG = dict(vocab_size=16, dim=8, n_layers=1, n_heads=2, n_kv_heads=1,
              max_seq_len=4, hidden_dim=8, rope_base=10000.0, norm_eps=1e-6,
              seed=0)
SHAPES = {
    "tok_emb.weight": (16, 8), "blocks.0.attn_norm.weight": (8,),
    "blocks.0.attn.wq": (8, 8), "blocks.0.attn.wk": (8, 4),
    "blocks.0.attn.wv": (8, 4), "blocks.0.attn.wo": (8, 8),
    "blocks.0.ffn_norm.weight": (8,), "blocks.0.ffn.w_gate": (8, 8),
    "blocks.0.ffn.w_up": (8, 8), "blocks.0.ffn.w_down": (8, 8),
    "norm.weight": (8,), "head.weight": (8, 16),
}


def write_checkpoint(folder, name, config=None, arrays=None, json_text=None):
    """<folder>/<name>.json and .npz: an honest tiny checkpoint unless told."""
    stem = pathlib.Path(folder) / name
    arrays = arrays if arrays is not None else {
        k: np.full(shape, 0.5, np.float32) for k, shape in SHAPES.items()}
    header = {"format": "netcl_lite.checkpoint", "version": 1,
              "model": "DecoderLM", "config": config or CONFIG,
              "tensors": {k: list(np.shape(a)) for k, a in arrays.items()},
              "extra": {}}
    stem.with_suffix(".json").write_text(
        json_text if json_text is not None else json.dumps(header))
    np.savez(stem.with_suffix(".npz"), **arrays)
    return stem


def write_zeros_npy(f, shape):
    """A zero float32 .npy of ``shape`` into the open file ``f``, in slices,
    so that neither writing it nor the result needs that much memory."""
    header = {"descr": "<f4", "fortran_order": False, "shape": shape}
    chunk = np.zeros(2**22, np.float32).tobytes()        # 16 MiB of zeros
    left = int(np.prod(shape)) * 4
    np.lib.format.write_array_header_1_0(f, header)
    while left:
        f.write(chunk[:min(left, len(chunk))])
        left -= min(left, len(chunk))


def checkpoint_cases():
    """name -> (maker(folder) -> stem, the error message expected)."""
    def big_vocab(d):
        return write_checkpoint(d, "c", config={**CONFIG, "vocab_size": 3_000_000})

    def huge_tensor(d):
        stem = write_checkpoint(d, "c")
        with zipfile.ZipFile(stem.with_suffix(".npz"), "w", zipfile.ZIP_DEFLATED,
                             compresslevel=1) as z:
            for k, shape in SHAPES.items():
                with z.open(k + ".npy", "w", force_zip64=True) as f:
                    if k == "tok_emb.weight":           # 1 GiB of zeros
                        write_zeros_npy(f, (16384, 16384))
                    else:
                        np.lib.format.write_array(
                            f, np.full(shape, 0.5, np.float32))
        return stem

    def float64_huge(d):
        arrays = {k: np.full(s, 0.5) for k, s in SHAPES.items()}
        arrays["norm.weight"] = np.full(8, 1e300)
        return write_checkpoint(d, "c", arrays=arrays)

    def truncated(d):
        stem = write_checkpoint(d, "c")
        data = stem.with_suffix(".npz").read_bytes()
        stem.with_suffix(".npz").write_bytes(data[: len(data) // 2])
        return stem

    def nested_json(d):
        return write_checkpoint(d, "c", json_text="[" * 100_000 + "]" * 100_000)

    def not_a_zip(d):
        stem = write_checkpoint(d, "c")
        stem.with_suffix(".npz").write_bytes(b"PK\x03\x04" + b"\0" * 100)
        return stem

    def lying_header(d):   # the .npy header says (16, 8), the data is shorter
        stem = write_checkpoint(d, "c")
        z = stem.with_suffix(".npz")
        arrays = {k: np.full(s, 0.5, np.float32) for k, s in SHAPES.items()}
        with zipfile.ZipFile(z, "w") as out:
            for k, a in arrays.items():
                with out.open(k + ".npy", "w") as f:
                    np.lib.format.write_array_header_1_0(
                        f, {"descr": "<f4", "fortran_order": False,
                            "shape": a.shape})
                    f.write(a.tobytes()[: 8 if k == "head.weight" else None])
        return stem

    def bad_heads(d):
        return write_checkpoint(d, "c", config={**CONFIG, "n_heads": 3})

    def int_weights(d):
        arrays = {k: np.ones(s, np.int64) for k, s in SHAPES.items()}
        return write_checkpoint(d, "c", arrays=arrays)

    return {
        "vocab_size 3,000,000 beside small weights":
            (big_vocab, r"'tok_emb.weight' has shape \(16, 8\), the model "
                        r"expects \(3000000, 8\)"),
        "1 GiB tensor compressed to a few MB":
            (huge_tensor, r"'tok_emb.weight' has shape \(16384, 16384\)"),
        "float64 weights of 1e300":
            (float64_huge, "'norm.weight' must hold finite floats that fit"),
        "truncated npz": (truncated, "not a readable .npz"),
        "deeply nested JSON": (nested_json, "nested too deeply"),
        "garbage after a zip signature": (not_a_zip, "not a readable .npz"),
        "npy header promises more data than there is":
            (lying_header, "head.weight|EOF|read"),
        "dim not divisible by n_heads": (bad_heads, "bad config .*n_heads 3"),
        "integer weights": (int_weights, "dtype int64"),
    }


HEADER = ["netcl_lite bpe v1", 'pattern "\\\\S+|\\\\s+"', "byte_ids identity"]


def tokenizer_file(folder, name, lines):
    path = pathlib.Path(folder) / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def tokenizer_cases():
    """name -> (maker(folder) -> path, the error message expected)."""
    def lines(specials=(), merges=(), pattern=None):
        head = list(HEADER)
        if pattern is not None:
            head[1] = "pattern " + pattern
        return [*head, f"special_tokens {len(specials)}", *specials,
                f"merges {len(merges)}", *merges, "end"]

    cases = {
        "two special tokens with one id": (
            lines(specials=['"<|x|>" 300', '"<|y|>" 300']),
            "'<|y|>' repeats the id 300 of '<|x|>'"),
        "the same merge twice": (
            lines(merges=["97 98", "97 98"]), "merge 1 repeats merge 0"),
        "a 1 MB pattern line": (
            lines(pattern=json.dumps("a" * 1_000_000)), "characters"),
        "a pattern nested 3000 deep": (
            lines(pattern=json.dumps("(" * 3000 + "a" + ")" * 3000)),
            "nests groups 3000 deep"),
        "deeply nested JSON as the pattern": (
            lines(pattern="[" * 15_000 + "]" * 15_000), "expected a JSON string"),
        "deeply nested JSON as a special token": (
            lines(specials=["[" * 30_000 + "]" * 30_000 + " 300"]),
            "expected \"<string>\" <id>"),
        "an id with 5000 digits": (
            lines(specials=['"<|x|>" ' + "9" * 5000]),
            "non-negative integer"),
        "a merge count with 5000 digits": (
            [*HEADER, "special_tokens 0", "merges " + "9" * 5000, "end"],
            "non-negative integer"),
    }
    return {name: ((lambda d, t=text: tokenizer_file(d, "tok.txt", t)), message)
            for name, (text, message) in cases.items()}


def tokenizer_json(folder, name="tokenizer.json", data=None, text=None,
                   raw=None, **model):
    """<folder>/<name>: an honest 256-byte tokenizer.json unless told."""
    from netcl_lite.text.pretrained import bytes_to_unicode

    path = pathlib.Path(folder) / name
    if raw is not None:
        path.write_bytes(raw)
        return path
    if text is None:
        vocab = {char: b for b, char in bytes_to_unicode().items()}
        data = data or {
            "version": "1.0", "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "use_regex": True},
            "model": {"type": "BPE", "vocab": vocab, "merges": []}}
        data["model"].update(model)
        text = json.dumps(data)
    path.write_text(text, encoding="utf-8")
    return path


def tokenizer_json_cases():
    """name -> (maker(folder) -> path, the error message expected)."""
    def split(pattern):
        return {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]}

    def with_pre(pattern):
        def make(d):
            path = tokenizer_json(d)
            data = json.loads(path.read_text(encoding="utf-8"))
            data["pre_tokenizer"] = split(pattern)
            return tokenizer_json(d, data=data)
        return make

    def added_token(idx):
        def make(d):
            data = json.loads(tokenizer_json(d).read_text(encoding="utf-8"))
            data["added_tokens"] = [{"id": idx, "content": "<x>"}]
            return tokenizer_json(d, data=data)
        return make

    def vocab_text(d):  # one key twice, which json.load would silently keep once
        body = json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": {},
                                                       "merges": []}})
        return tokenizer_json(d, text=body.replace('"vocab": {}',
                                                   '"vocab": {"a": 1, "a": 2}'))

    return {
        "deeply nested JSON": (
            lambda d: tokenizer_json(d, text="[" * 100_000 + "]" * 100_000),
            "nested too deeply"),
        "not UTF-8": (lambda d: tokenizer_json(d, raw=b"\x80\x04\x95\xff\xfe"),
                      "not a UTF-8 text file"),
        "truncated JSON": (lambda d: tokenizer_json(d, text='{"model": {"vocab": {'),
                           "not a valid JSON file"),
        "a JSON array": (lambda d: tokenizer_json(d, text="[1, 2]"),
                         "expected a JSON object"),
        "an id with 40 digits": (
            lambda d: tokenizer_json(d, vocab={"a": 10 ** 40}), "must be an id"),
        "a merge of tokens that do not exist": (
            lambda d: tokenizer_json(d, merges=["Ġ zz"]), "'zz' is not in model.vocab"),
        "a 1 MB split pattern": (with_pre("a" * 1_000_000), "1000000 characters"),
        "a split pattern nested 3000 deep": (
            with_pre("(" * 3000 + "a" + ")" * 3000), "nests groups 3000 deep"),
        "a Unigram model": (lambda d: tokenizer_json(d, type="Unigram"),
                            "model.type is 'Unigram'"),
        "a vocabulary key twice": (vocab_text, "appears twice"),
        "an added token with a huge id": (added_token(2 ** 40), "must be an id"),
    }


def main(folder):
    folder = pathlib.Path(folder)
    for group, cases in (("checkpoint", checkpoint_cases()),
                         ("tokenizer", tokenizer_cases()),
                         ("tokenizer_json", tokenizer_json_cases())):
        for i, (name, (make, _)) in enumerate(cases.items()):
            sub = folder / f"{group}_{i:02d}"
            sub.mkdir(parents=True, exist_ok=True)
            print(sub, make(sub), name)


if __name__ == "__main__":
    main(sys.argv[1])
