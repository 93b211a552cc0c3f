"""The tokenizer inside a GGUF file, read with the `gguf` package (chapter 14).

A GGUF file (llama.cpp's format) holds a model's weights and, as metadata
beside them, its tokenizer:

    tokenizer.ggml.model       "gpt2": byte-level BPE, the kind read here
    tokenizer.ggml.pre         the split: "smollm", "gpt2" or "llama-bpe"
    tokenizer.ggml.tokens      every token, spelled as in a tokenizer.json
                               (the space byte is "Ġ"); its place is its id
    tokenizer.ggml.token_type  1 normal, 3 control ("<|im_end|>"),
                               4 user-defined, 2 unknown, 5 unused, 6 byte
    tokenizer.ggml.merges      "left right", in rank order
    tokenizer.ggml.bos_token_id, eos_token_id, eot_token_id, ...
    tokenizer.chat_template    a Jinja template (chat_template.py renders it)

The splits (tokenizer.ggml.pre) and what they mean, as in llama.cpp:

    smollm     every digit alone, then GPT-2's split (SMOLLM_SPLIT_PATTERN)
    gpt2       GPT-2's split (GPT2_SPLIT_PATTERN)
    llama-bpe  Llama 3's split (LLAMA3_SPLIT_PATTERN), and a chunk that is
               itself a token becomes that token before any merge
               (tiktoken's rule, `ignore_merges` in a tokenizer.json)

Control and user-defined tokens become special tokens: `encode(text)` keeps
their strings as text, `encode(text, allowed_special="all")` gives their
ids. (llama.cpp and transformers match user-defined tokens, which are rare,
even when special tokens are not allowed.) Any other tokenizer model (a
SentencePiece "llama" one), any other split, a missing or mistyped field, or
a merge that names a token the file lacks raises a ValueError that names
it. A vocabulary may lack some of the 256 bytes; such a byte is dropped from
the text, as transformers and llama.cpp do (tokenizer_json.byte_level_vocab).

The file itself is parsed by `open_gguf` (netcl_lite/formats/gguf_reader.py),
the reader the model side shares: a damaged file is a ValueError that names
the part that did not parse. `gguf` is an optional dependency
(``pip install netcl_lite[models]``), so it is imported where a file is
read, not when the package is.
"""

from typing import NamedTuple

import numpy as np

from netcl_lite.formats.gguf_reader import (is_reader, open_gguf, require_gguf,
                                            source_of)

from .patterns import GPT2_SPLIT_PATTERN, LLAMA3_SPLIT_PATTERN, SMOLLM_SPLIT_PATTERN
from .tokenizer_json import FieldReader, byte_level_vocab, read_merges

# tokenizer.ggml.pre -> (split pattern, ignore_merges)
PRE_TOKENIZERS = {
    "smollm": (SMOLLM_SPLIT_PATTERN, False),
    "gpt2": (GPT2_SPLIT_PATTERN, False),
    "llama-bpe": (LLAMA3_SPLIT_PATTERN, True),
}
CONTROL, USER_DEFINED = 3, 4  # the token types that become special tokens
TOKEN_TYPES = range(1, 7)  # normal, unknown, control, user-defined, unused, byte
# the special ids a file may name: tokenizer.ggml.<key>_token_id -> our name
SPECIAL_IDS = {"bos": "bos", "eos": "eos", "eot": "eot", "eom": "eom",
               "unknown": "unk", "seperator": "sep", "padding": "pad",
               "mask": "mask"}  # "seperator" is how GGUF spells it


class GGUFTokenizer(NamedTuple):
    """What a GGUF file's metadata says, in the tokenizer's terms."""

    pattern: str  # the split pattern
    vocab: dict  # id -> bytes, every token
    byte_ids: list  # byte_ids[b] = id of the single byte b, None if missing
    merges: list  # [(left id, right id), ...] in rank order
    made: list  # made[rank] = the id of the token merge `rank` makes
    special_tokens: dict  # control and user-defined tokens: {string: id}
    ignore_merges: bool
    whole: list  # ids of the tokens spelled in bytes (for ignore_merges)
    special_ids: dict  # the ids the file names: {"bos": 1, "eos": 2, ...}
    chat_template: object  # the Jinja source, or None


def read_gguf_tokenizer(source):
    """A GGUF file's path, or an open `gguf.GGUFReader` -> a GGUFTokenizer."""
    gguf = require_gguf()
    if is_reader(source):  # opened already (by netcl_lite.nn.pretrained)
        reader, path = source, source_of(source)
    else:
        reader, path = open_gguf(source), source
    fields = _Fields(reader, gguf, path)
    model = fields.string("tokenizer.ggml.model")
    if model != "gpt2":
        kind = ("a SentencePiece tokenizer" if model == "llama"
                else "a tokenizer this library does not read")
        fields.fail("tokenizer.ggml.model", f"is {model!r} ({kind}); this reads "
                    "'gpt2' (byte-level BPE) only")
    pre = fields.string("tokenizer.ggml.pre")
    if pre not in PRE_TOKENIZERS:
        fields.fail("tokenizer.ggml.pre", f"is {pre!r}, a split this library "
                    f"does not know; it reads {', '.join(map(repr, PRE_TOKENIZERS))}")
    pattern, ignore_merges = PRE_TOKENIZERS[pre]

    tokens = fields.strings("tokenizer.ggml.tokens")
    types = fields.ints("tokenizer.ggml.token_type")
    if len(types) != len(tokens):
        fields.fail("tokenizer.ggml.token_type", f"has {len(types)} entries for "
                    f"{len(tokens)} tokens")
    bad = np.flatnonzero(~np.isin(types, TOKEN_TYPES))
    if len(bad):
        fields.fail(f"tokenizer.ggml.token_type[{bad[0]}]", f"is {types[bad[0]]}, "
                    f"not a token type (1..6)")
    if "" in tokens:
        fields.fail(f"tokenizer.ggml.tokens[{tokens.index('')}]", "is empty")
    strings = {text: idx for idx, text in enumerate(tokens)}  # the last one wins
    vocab, whole, byte_ids = byte_level_vocab(fields, strings,
                                              "tokenizer.ggml.tokens")
    for idx, text in enumerate(tokens):  # a repeated spelling: the same bytes
        vocab.setdefault(idx, vocab[strings[text]])
    merges, made = read_merges(fields, fields.strings("tokenizer.ggml.merges"),
                               strings, "tokenizer.ggml.merges",
                               "tokenizer.ggml.tokens")
    special = np.flatnonzero(np.isin(types, (CONTROL, USER_DEFINED))).tolist()
    special_tokens = {tokens[idx]: idx for idx in special}
    for text, idx in special_tokens.items():  # matched, and decoded, as written
        vocab[idx] = text.encode("utf-8")
    special_ids = {}
    for key, name in SPECIAL_IDS.items():
        idx = fields.token_id(f"tokenizer.ggml.{key}_token_id", len(tokens))
        if idx is not None:
            special_ids[name] = idx
    chat_template = None
    if "tokenizer.chat_template" in reader.fields:
        chat_template = fields.string("tokenizer.chat_template")
    return GGUFTokenizer(pattern, vocab, byte_ids, merges, made, special_tokens,
                         ignore_merges, whole, special_ids, chat_template)


class _Fields(FieldReader):
    """Typed access to a GGUF reader's metadata; errors name file and key."""

    def __init__(self, reader, gguf, path):
        super().__init__(path)
        self.fields, self.types = reader.fields, gguf.GGUFValueType

    def field(self, key, kinds, what):
        field = self.fields.get(key)
        if field is None:
            self.fail(key, f"is missing; a GGUF tokenizer needs it ({what})")
        empty = field.types == [self.types.ARRAY] and not field.data  # no item type
        if field.types != list(kinds) and not (empty and kinds[0] == self.types.ARRAY):
            got = "/".join(t.name for t in field.types) or "nothing"
            self.fail(key, f"must be {what}, got {got}")
        return field

    def string(self, key):
        field = self.field(key, [self.types.STRING], "a string")
        return self._text(key, field.parts[field.data[0]])

    def strings(self, key):
        field = self.field(key, [self.types.ARRAY, self.types.STRING],
                           "an array of strings")
        parts = field.parts
        try:
            return [bytes(parts[i]).decode("utf-8") for i in field.data]
        except UnicodeDecodeError:
            for n, i in enumerate(field.data):
                self._text(f"{key}[{n}]", parts[i])
            raise

    def ints(self, key):
        field = self.fields.get(key)
        kind = field.types[-1] if field is not None and field.types else None
        if getattr(kind, "name", None) not in _INTEGERS:
            kind = self.types.INT32  # so that `field` fails, naming what it got
        field = self.field(key, [self.types.ARRAY, kind], "an array of integers")
        if not field.data:
            return np.zeros(0, np.int64)
        return np.concatenate([field.parts[i] for i in field.data]).astype(np.int64)

    def token_id(self, key, n_tokens):
        """An optional id; it must name one of the n_tokens tokens."""
        field = self.fields.get(key)
        if field is None:
            return None
        if len(field.types) != 1 or field.types[0].name not in _INTEGERS:
            got = "/".join(t.name for t in field.types)
            self.fail(key, f"must be an integer token id, got {got}")
        idx = int(field.parts[field.data[0]][0])
        if not 0 <= idx < n_tokens:
            self.fail(key, f"is {idx}, not a token id (0..{n_tokens - 1})")
        return idx

    def _text(self, key, raw):
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(key, f"is not valid UTF-8 ({e.reason} at byte {e.start})")


_INTEGERS = {"UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64",
             "INT64"}
