"""Tiny GGUF files with a byte-level tokenizer, written with `gguf.GGUFWriter`.

`write(path, **changes)` writes an honest file (no tensors): three control
tokens first, as SmolLM2 has them, then the 256 bytes spelled as a
tokenizer.json spells them, then the tokens of MERGES. A change replaces a
field (None leaves it out), or `types` gives a key's GGUF value type, so
that the tests can write every kind of bad file. `hf_tokenizer` builds the
same vocabulary in `tokenizers`, the outside reference.
"""

import gguf
from tokenizers import Regex, Tokenizer, models, pre_tokenizers

from netcl_lite.text.pretrained import bytes_to_unicode

SPELL = bytes_to_unicode()  # byte -> its stand-in character
CONTROL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MERGES = ["Ġ t", "h e", "Ġt he", "i n", "in g", "Ġ a", "1 2", "12 3", "123 4",
          "Ġ 1", "Ġ Ġ", "ĠĠ ĠĠ", "Ċ Ċ", "' s", "e r", "Ġ w", "o r", "Ġw or"]
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
            "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}"
            "<|im_start|>assistant\n{% endif %}")
V = gguf.GGUFValueType


def tokens_and_types(drop=()):
    """Control tokens, the bytes (less `drop`), the merges' tokens."""
    tokens = CONTROL + [SPELL[b] for b in range(256) if b not in drop]
    tokens += ["".join(m.split(" ")) for m in MERGES]
    types = [3] * len(CONTROL) + [1] * (len(tokens) - len(CONTROL))
    return tokens, types


def fields(pre="gpt2", drop=()):
    tokens, types = tokens_and_types(drop)
    return {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.merges": MERGES,
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.chat_template": TEMPLATE,
    }


# each key's usual GGUF type: (type, item type of an array)
TYPES = {
    "tokenizer.ggml.model": (V.STRING, None),
    "tokenizer.ggml.pre": (V.STRING, None),
    "tokenizer.ggml.tokens": (V.ARRAY, V.STRING),
    "tokenizer.ggml.token_type": (V.ARRAY, V.INT32),
    "tokenizer.ggml.merges": (V.ARRAY, V.STRING),
    "tokenizer.chat_template": (V.STRING, None),
}


def write(path, pre="gpt2", drop=(), types=None, **changes):
    """Write a tiny tokenizer GGUF file at `path`; see the module docstring.

    `changes` use underscores for dots after "tokenizer.": ggml_pre=...
    """
    values = fields(pre, drop)
    for key, value in changes.items():
        values["tokenizer." + key.replace("ggml_", "ggml.")] = value
    types = {**TYPES, **(types or {})}
    writer = gguf.GGUFWriter(str(path), "llama")
    for key, value in values.items():
        if value is None:
            continue
        vtype, sub = types.get(key, (V.UINT32, None))
        writer.add_key_value(key, value, vtype, sub)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def hf_tokenizer(pre, drop=()):
    """The same vocabulary in `tokenizers`, with Hugging Face's own spelling
    of each split (as transformers and SmolLM2's published file spell it)."""
    tokens, _ = tokens_and_types(drop)
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ")) for m in MERGES]
    tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=pre == "llama-bpe"))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    if pre == "gpt2":
        tok.pre_tokenizer = byte_level
    elif pre == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.add_special_tokens(CONTROL)
    return tok
