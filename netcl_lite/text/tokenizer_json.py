"""Hugging Face's `tokenizer.json`: reading and writing byte-level BPE (chapter 1).

Llama 3, Qwen2, Mistral's Tekken, GPT-NeoX and OLMo ship their vocabulary as
one JSON file for the `tokenizers` library. For a byte-level BPE it holds the
same things as the course's own file, spelled differently:

- `pre_tokenizer`: the split. `ByteLevel` alone cuts with GPT-2's regex
  (HF's spelling of it cuts exactly like GPT2_SPLIT_PATTERN); Llama 3 and
  Qwen2 put a `Split` with their own regex before a `ByteLevel` that only
  maps bytes to characters (`use_regex: false`); SmolLM puts `Digits`
  (every digit alone) before GPT-2's (SMOLLM_SPLIT_PATTERN).
- `model.vocab`: token -> id, each token spelled with GPT-2's printable
  stand-ins for bytes (pretrained.bytes_to_unicode: the space byte is "Ġ").
  The 256 single bytes may have any ids; Tekken's start at 1000. A real
  vocabulary may lack some bytes (SmolLM2 lacks 21): `tokenizers` drops
  such a byte from the text, unless `model.unk_token` is set, and so does
  the tokenizer here (a file with both is refused).
- `model.merges`: "left right" (or ["left", "right"]) in rank order. A merge
  makes the token left + right, whatever its id; several merges may make
  the same token (Llama 3's do, because its vocabulary came from tiktoken).
- `model.ignore_merges`: a chunk that is itself a token becomes that token
  before any merge (tiktoken's rule; Llama 3 sets it).
- `added_tokens`: strings matched before the split, with their ids; here
  they become special tokens.

Whatever else could change the ids is refused with a ValueError that names
the field, never skipped: a normalizer, a Unigram, WordPiece or WordLevel
model, byte fallback, dropout, subword prefixes, `add_prefix_space`, other
pre-tokenizers, truncation and padding, added tokens that strip spaces or
match whole words only, and ids that `tokenizers` itself would renumber.
A post-processor (Llama 3's adds <|begin_of_text|>) only adds tokens around
the text when `tokenizers` is asked to (`add_special_tokens=True`); `encode`
never adds any, so the ids equal `encode(text, add_special_tokens=False)`.

The file is parsed with `json` and checked field by field, never evaluated.
"""

import json
from typing import NamedTuple

import regex

from .oniguruma import to_oniguruma, to_regex
from .patterns import (GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, MAX_PATTERN_CHARS,
                       O200K_SPLIT_PATTERN, SMOLLM_SPLIT_PATTERN, check_pattern)
from .pretrained import bytes_to_unicode

# HF's ByteLevel pre-tokenizer regex (use_regex: true). It cuts exactly as
# tiktoken's GPT-2 pattern: `\s+` is only reached for one whitespace
# character before a non-space, where `\s` matches the same, and `\s++$`
# matches what `\s+(?!\S)` does (tests/text/test_text_tokenizer_json.py).
HF_BYTE_LEVEL_REGEX = (
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
)
MAX_ID = 0x10FFFF  # ids above this are refused (no vocabulary comes near it)
_KNOWN = (GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN)
_ALPHABET = [bytes_to_unicode()[b] for b in range(256)]  # byte b is spelled so
_TO_LATIN1 = {ord(char): b for b, char in enumerate(_ALPHABET)}  # .encode("latin-1")
_FROM_LATIN1 = dict(enumerate(map(ord, _ALPHABET)))  # after .decode("latin-1")
_NOT_BYTE_LEVEL = regex.compile("[^" + regex.escape("".join(_ALPHABET)) + "]")
_TOP_LEVEL = {"version", "truncation", "padding", "added_tokens", "normalizer",
              "pre_tokenizer", "post_processor", "decoder", "model"}
_MODEL_FIELDS = {"type", "dropout", "unk_token", "continuing_subword_prefix",
                 "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges",
                 "vocab", "merges"}
# post-processors that only add tokens around a text, when asked to
_TEMPLATES = {"ByteLevel", "TemplateProcessing", "RobertaProcessing",
              "BertProcessing"}


class TokenizerJson(NamedTuple):
    """What a byte-level BPE `tokenizer.json` says, in the tokenizer's terms."""

    pattern: str  # the split pattern
    vocab: dict  # id -> bytes, every token of model.vocab
    byte_ids: list  # byte_ids[b] = id of the single byte b
    merges: list  # [(left id, right id), ...] in rank order
    made: list  # made[rank] = the id of the token merge `rank` makes
    special_tokens: dict  # added_tokens: {string: id}
    ignore_merges: bool
    whole: list  # ids of the tokens spelled in bytes (for ignore_merges)


def read_tokenizer_json(path):
    """Read and check a tokenizer.json; returns a TokenizerJson."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f, object_pairs_hook=_no_repeated_keys)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a UTF-8 text file ({e})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a tokenizer.json (JSON nested too "
                         "deeply)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a valid JSON file ({e})") from None
    except _RepeatedKey as e:
        raise ValueError(f"{path}: the key {e.args[0]!r} appears twice in one "
                         "JSON object") from None
    reader = FieldReader(path)
    if not isinstance(data, dict):
        reader.fail("", f"expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - _TOP_LEVEL)
    if unknown:
        reader.fail(unknown[0], "is not a field this reader knows")
    if data.get("version", "1.0") != "1.0":
        reader.fail("version", f"is {data['version']!r}; this reads '1.0'")
    for field in ("truncation", "padding"):
        if data.get(field) is not None:
            reader.fail(field, "is set; it changes the ids of a long text")
    _check_normalizer(reader, data.get("normalizer"))
    pattern = _read_pre_tokenizer(reader, data.get("pre_tokenizer"))
    _check_post_processor(reader, data.get("post_processor"), "post_processor")
    _check_decoder(reader, data.get("decoder"))
    model = reader.object(data.get("model"), "model")
    vocab, byte_ids, merges, made, ignore_merges, whole, strings = _read_model(
        reader, model)
    specials = _read_added_tokens(reader, data.get("added_tokens", []), strings,
                                  vocab)
    return TokenizerJson(pattern, vocab, byte_ids, merges, made, specials,
                         ignore_merges, whole)


class _RepeatedKey(Exception):
    pass


def _no_repeated_keys(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(key)
        out[key] = value
    return out


class FieldReader:
    """Error messages that name the file and the field."""

    def __init__(self, path):
        self.path = path

    def fail(self, field, message):
        where = f"{self.path}: {field} " if field else f"{self.path}: "
        raise ValueError(where + message)

    def object(self, value, field):
        if not isinstance(value, dict):
            self.fail(field, f"must be a JSON object, got {_kind(value)}")
        return value

    def flag(self, obj, key, field, default=False):
        value = obj.get(key, default)
        if not isinstance(value, bool):
            self.fail(f"{field}.{key}", f"must be true or false, got {value!r}")
        return value

    def type_of(self, obj, field):
        kind = self.object(obj, field).get("type")
        if not isinstance(kind, str):
            self.fail(f"{field}.type", f"must be a string, got {_kind(kind)}")
        return kind


def _utf8(reader, text, field):
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        reader.fail(field, f"holds a lone surrogate: {text[:40]!r}")


def _kind(value):
    return "null" if value is None else type(value).__name__


def _check_normalizer(reader, normalizer):
    if normalizer is None:
        return
    kind = reader.type_of(normalizer, "normalizer")
    if kind == "Sequence" and normalizer.get("normalizers") == []:
        return  # an empty sequence changes nothing
    reader.fail("normalizer", f"is {kind!r}; a normalizer changes the text "
                "before the split, which this tokenizer does not do")


def _read_pre_tokenizer(reader, pre):
    """The split pattern of ByteLevel, or of Split followed by ByteLevel."""
    field = "pre_tokenizer"
    if pre is None:
        reader.fail(field, "is null; a byte-level BPE needs a ByteLevel "
                    "pre-tokenizer")
    kind = reader.type_of(pre, field)
    if kind == "ByteLevel":
        return _byte_level(reader, pre, field, alone=True)
    if kind != "Sequence":
        reader.fail(f"{field}.type", f"is {kind!r}; this reads ByteLevel, or a "
                    "Sequence of a Split and a ByteLevel")
    steps = pre.get("pretokenizers")
    if not isinstance(steps, list) or not 1 <= len(steps) <= 2:
        reader.fail(f"{field}.pretokenizers", "must list a ByteLevel, or a Split "
                    "and then a ByteLevel")
    kinds = [reader.type_of(s, f"{field}.pretokenizers[{i}]")
             for i, s in enumerate(steps)]
    if kinds == ["ByteLevel"]:
        return _byte_level(reader, steps[0], f"{field}.pretokenizers[0]",
                           alone=True)
    if kinds == ["Digits", "ByteLevel"]:  # SmolLM's: every digit alone first
        if not reader.flag(steps[0], "individual_digits", f"{field}.pretokenizers[0]"):
            reader.fail(f"{field}.pretokenizers[0].individual_digits", "is false; "
                        "this reads Digits that split every digit alone")
        pattern = _byte_level(reader, steps[1], f"{field}.pretokenizers[1]",
                              alone=True)
        if pattern != GPT2_SPLIT_PATTERN:
            reader.fail(f"{field}.pretokenizers[1].use_regex", "is false after "
                        "Digits; this reads Digits, then GPT-2's split")
        return SMOLLM_SPLIT_PATTERN
    if kinds != ["Split", "ByteLevel"]:
        reader.fail(f"{field}.pretokenizers", f"are {kinds}; this reads "
                    "['ByteLevel'], ['Split', 'ByteLevel'] or "
                    "['Digits', 'ByteLevel']")
    pattern = _split(reader, steps[0], f"{field}.pretokenizers[0]")
    _byte_level(reader, steps[1], f"{field}.pretokenizers[1]", alone=False)
    return pattern


def _byte_level(reader, step, field, alone):
    if reader.flag(step, "add_prefix_space", field):
        reader.fail(f"{field}.add_prefix_space", "is true; it puts a space before "
                    "every text, which this tokenizer does not do")
    reader.flag(step, "trim_offsets", field, True)  # offsets only
    use_regex = reader.flag(step, "use_regex", field, True)
    if not alone:
        if use_regex:
            reader.fail(f"{field}.use_regex", "is true after a Split: two splits "
                        "in a row, which one pattern cannot express")
        return None
    # ByteLevel alone: GPT-2's regex, or (use_regex false) no split at all
    return GPT2_SPLIT_PATTERN if use_regex else r"[\s\S]+"


def _split(reader, step, field):
    behavior = step.get("behavior")
    if behavior != "Isolated":
        reader.fail(f"{field}.behavior", f"is {behavior!r}; this reads 'Isolated' "
                    "(each match a chunk of its own)")
    if reader.flag(step, "invert", field):
        reader.fail(f"{field}.invert", "is true; this reads a pattern that "
                    "matches the chunks")
    spec = step.get("pattern")
    if not (isinstance(spec, dict) and len(spec) == 1
            and set(spec) <= {"Regex", "String"}):
        reader.fail(f"{field}.pattern", 'must be {"Regex": ...} or '
                    '{"String": ...}')
    (kind, pattern), = spec.items()
    if not isinstance(pattern, str) or not pattern:
        reader.fail(f"{field}.pattern", "must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:  # before any parsing: a cheap refusal
        reader.fail(f"{field}.pattern", f"has {len(pattern)} characters (at most "
                    f"{MAX_PATTERN_CHARS})")
    try:
        if kind == "String":  # a literal string: its escaped form matches it
            return check_pattern(regex.escape(pattern))
        for known in _KNOWN:  # the pattern as `save_tokenizer_json` spells it
            if pattern == to_oniguruma(known):
                return known
        return check_pattern(to_regex(pattern))
    except ValueError as e:
        reader.fail(f"{field}.pattern", str(e))


def _check_post_processor(reader, post, field):
    if post is None:
        return
    kind = reader.type_of(post, field)
    if kind == "Sequence":
        steps = post.get("processors")
        if not isinstance(steps, list):
            reader.fail(f"{field}.processors", "must be a list")
        for i, step in enumerate(steps):
            _check_post_processor(reader, step, f"{field}.processors[{i}]")
    elif kind not in _TEMPLATES:
        reader.fail(f"{field}.type", f"is {kind!r}; this reads only "
                    "post-processors that add tokens around a text "
                    f"({', '.join(sorted(_TEMPLATES))})")


def _check_decoder(reader, decoder):
    if decoder is not None and reader.type_of(decoder, "decoder") != "ByteLevel":
        reader.fail("decoder.type", f"is {decoder['type']!r}; a byte-level BPE "
                    "decodes with ByteLevel")


def _read_model(reader, model):
    kind = reader.type_of(model, "model")
    if kind != "BPE":
        reader.fail("model.type", f"is {kind!r}; this reads byte-level BPE only "
                    "(not Unigram, WordPiece or WordLevel)")
    unknown = sorted(set(model) - _MODEL_FIELDS)
    if unknown:
        reader.fail(f"model.{unknown[0]}", "is not a field this reader knows")
    if reader.flag(model, "byte_fallback", "model"):
        reader.fail("model.byte_fallback", "is true; byte fallback (<0xNN> "
                    "tokens) is not byte-level BPE")
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0) or isinstance(dropout, bool):
        reader.fail("model.dropout", f"is {dropout!r}; dropout skips merges at "
                    "random")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            reader.fail(f"model.{key}", f"is {model[key]!r}; byte-level BPE "
                        "marks no subwords")
    reader.flag(model, "fuse_unk", "model")  # no unknown token occurs: see unk_token
    ignore_merges = reader.flag(model, "ignore_merges", "model")

    strings = reader.object(model.get("vocab"), "model.vocab")  # str -> id
    if "" in strings:
        reader.fail("model.vocab", "has an empty token")
    ids = list(strings.values())
    if not all(type(idx) is int and 0 <= idx <= MAX_ID for idx in ids):
        text, idx = next((t, i) for t, i in strings.items()
                         if not (type(i) is int and 0 <= i <= MAX_ID))
        reader.fail(f"model.vocab[{text[:40]!r}]", f"must be an id 0..{MAX_ID}, "
                    f"got {idx!r}")
    if len(set(ids)) != len(ids):
        owner = {}
        for text, idx in strings.items():
            if idx in owner:
                reader.fail(f"model.vocab[{text[:40]!r}]", f"repeats the id {idx} "
                            f"of {owner[idx][:40]!r}")
            owner[idx] = text
    unk = model.get("unk_token")
    vocab, whole, byte_ids = byte_level_vocab(reader, strings, "model.vocab")
    if unk is not None and None in byte_ids:
        missing = byte_ids.index(None)
        reader.fail("model.unk_token", f"is {unk!r} and model.vocab has no token "
                    f"for the byte 0x{missing:02X}; tokenizers would put the "
                    "unknown token in its place, which this tokenizer does not "
                    "do (it drops such a byte, as tokenizers does without one)")
    merges, made = read_merges(reader, model.get("merges"), strings, "model.merges",
                               "model.vocab")
    return vocab, byte_ids, merges, made, ignore_merges, whole, strings


def byte_level_vocab(reader, strings, field):
    """{spelling: id} -> ({id: bytes}, [ids spelled in bytes], byte_ids).

    A token spelled only in GPT-2's stand-ins for bytes is those bytes; any
    other (a control token such as "<｜end▁of▁sentence｜>") is its own text
    in UTF-8, as `tokenizers` decodes it. byte_ids[b] is the id of the byte
    b, or None where the vocabulary has no such token: a real model's
    vocabulary may lack bytes that its training text never held (SmolLM2
    lacks 21, among them 0x04 and 0xF5-0xFF), and `tokenizers` and llama.cpp
    then drop that byte from the text. The tokenizer does the same, as
    `tokenizers` does it (`BPETokenizer.dropped_bytes`).
    """
    vocab, whole = {}, []  # id -> bytes; the ids spelled in bytes
    for text, idx in strings.items():
        if _NOT_BYTE_LEVEL.search(text) is None:
            vocab[idx] = text.translate(_TO_LATIN1).encode("latin-1")
            whole.append(idx)
        else:  # not spelled in bytes: tokenizers decodes it as its text
            vocab[idx] = _utf8(reader, text, f"{field}[{text[:40]!r}]")
    byte_ids = [strings.get(char) for char in _ALPHABET]  # None: a missing byte
    return vocab, whole, byte_ids


def read_merges(reader, merges_in, strings, field, vocab_field):
    """The merges, "left right" or ["left", "right"], as ids in rank order.

    Returns (merges, made): merges[rank] = (left id, right id), and
    made[rank] the id of the token left + right. A merge of tokens that
    are not in the vocabulary, or whose result is not, raises ValueError.
    """
    if not isinstance(merges_in, list):
        reader.fail(field, f"must be a list, got {_kind(merges_in)}")
    merges, made = [], []
    for i, merge in enumerate(merges_in):
        kind = type(merge)
        parts = merge.split(" ") if kind is str else merge if kind is list else ()
        try:
            left, right = parts
            merges.append((strings[left], strings[right]))
            made.append(strings[left + right])
        except (ValueError, KeyError, TypeError):
            _bad_merge(reader, f"{field}[{i}]", merge, strings, vocab_field)
    if len(set(merges)) != len(merges):
        seen = {}
        for i, pair in enumerate(merges):
            if pair in seen:
                reader.fail(f"{field}[{i}]", f"repeats {field}[{seen[pair]}] "
                            f"{merges_in[i]!r}")
            seen[pair] = i
    return merges, made


def _bad_merge(reader, field, merge, strings, vocab_field):
    parts = merge.split(" ") if isinstance(merge, str) else merge
    if (not isinstance(parts, list) or len(parts) != 2
            or not all(isinstance(p, str) and p for p in parts)):
        reader.fail(field, f'must be "left right" or '
                    f'["left", "right"], got {str(merge)[:60]!r}')
    for part in (*parts, parts[0] + parts[1]):
        if part not in strings:
            reader.fail(field, f"{merge!r}: {part[:40]!r} is not in {vocab_field}")


def _read_added_tokens(reader, added, strings, vocab):
    """{content: id}, with the ids checked against tokenizers' own numbering.

    `tokenizers` gives an added token the id of the same string in
    model.vocab, or else the next id after the vocabulary and the tokens
    added before it; a file whose ids disagree would be renumbered on load.
    """
    if not isinstance(added, list):
        reader.fail("added_tokens", f"must be a list, got {_kind(added)}")
    specials, top = {}, None  # top: the largest id added so far
    for i, token in enumerate(added):
        field = f"added_tokens[{i}]"
        reader.object(token, field)
        content, idx = token.get("content"), token.get("id")
        if not isinstance(content, str) or not content:
            reader.fail(f"{field}.content", "must be a non-empty string")
        if type(idx) is not int or not 0 <= idx <= MAX_ID:
            reader.fail(f"{field}.id", f"must be an id 0..{MAX_ID}, got {idx!r}")
        for flag in ("single_word", "lstrip", "rstrip"):
            if reader.flag(token, flag, field):
                reader.fail(f"{field}.{flag}", f"is true ({content!r}); this "
                            "matches special tokens exactly as written")
        reader.flag(token, "normalized", field)  # no normalizer: no effect
        reader.flag(token, "special", field)
        if content in specials:
            reader.fail(f"{field}.content", f"repeats the added token {content!r}")
        _utf8(reader, content, f"{field}.content")
        expected = strings.get(content)
        if expected is None:  # after the vocabulary and every earlier added token
            size = len(strings)
            expected = size if top is None or top < size else top + 1
        top = expected if top is None else max(top, expected)
        if idx != expected:
            reader.fail(f"{field}.id", f"is {idx} for {content!r}; tokenizers "
                        f"would give it the id {expected}")
        if idx in vocab and vocab[idx] != content.encode("utf-8"):
            reader.fail(f"{field}.id", f"{idx} is the token "
                        f"{vocab[idx][:40]!r} in model.vocab, not {content!r}")
        specials[content] = idx
    return specials


def write_tokenizer_json(path, pattern, vocab, merges, special_tokens,
                         ignore_merges):
    """Write a byte-level BPE as tokenizer.json.

    `vocab` maps every regular id to its bytes; `merges` are (left id, right
    id) in rank order, each making the token of the joined bytes. Special
    tokens become added tokens; those that `tokenizers` would number
    differently (ids with gaps) are also listed in model.vocab with their ids,
    which is how its own trainer stores them.
    """
    strings = {idx: raw.decode("latin-1").translate(_FROM_LATIN1)  # id -> spelling
               for idx, raw in vocab.items()}
    special_at = {idx: text for text, idx in special_tokens.items()}
    for idx, text in special_at.items():
        if idx in vocab:  # a special token that is also a regular one
            if vocab[idx] != text.encode("utf-8"):
                raise ValueError(f"special token {text!r} has the id {idx} of the "
                                 f"regular token {vocab[idx]!r}")
            strings[idx] = text  # spelled as text, as tokenizers' trainer does
    by_spelling = {}
    for idx, text in strings.items():
        if text in by_spelling:
            raise ValueError(f"tokens {by_spelling[text]} and {idx} have the same "
                             f"bytes {vocab[idx]!r}; model.vocab cannot hold both")
        by_spelling[text] = idx

    # tokenizers numbers added tokens that are not in model.vocab from
    # len(model.vocab) on; where ours do not follow that, list them there too
    outside = sorted(idx for idx in special_at if idx not in vocab)
    if outside != list(range(len(strings), len(strings) + len(outside))):
        for idx in outside:
            text = special_at[idx]
            if text in by_spelling or ignore_merges:
                raise ValueError(
                    f"special token {text!r} has the id {idx}; tokenizers would "
                    f"number it {len(strings) + outside.index(idx)}, and it "
                    "cannot be listed in model.vocab "
                    + ("(a chunk could then match it whole)" if ignore_merges
                       else "(a regular token has that spelling)"))
            strings[idx] = text

    added = [{"id": idx, "content": special_at[idx], "single_word": False,
              "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for idx in sorted(special_at)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False,
                  "trim_offsets": True, "use_regex": True}
    if pattern == GPT2_SPLIT_PATTERN:
        pre_tokenizer = byte_level
    elif pattern == SMOLLM_SPLIT_PATTERN:  # as SmolLM's own file spells it
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True}, byte_level]}
    else:
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": to_oniguruma(pattern)},
             "behavior": "Isolated", "invert": False},
            {**byte_level, "use_regex": False}]}
    model = {"type": "BPE", "dropout": None, "unk_token": None,
             "continuing_subword_prefix": None, "end_of_word_suffix": None,
             "fuse_unk": False, "byte_fallback": False}
    if ignore_merges:  # written only when set, so older tokenizers read the rest
        model["ignore_merges"] = True
    model["vocab"] = {strings[idx]: idx for idx in sorted(strings)}
    pairs = [(strings[left], strings[right]) for left, right in merges]
    if any(" " in part for pair in pairs for part in pair):
        model["merges"] = [list(pair) for pair in pairs]  # tokenizers >= 0.20
    else:  # "left right": the form every version of tokenizers reads
        model["merges"] = [f"{left} {right}" for left, right in pairs]
    data = {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": added, "normalizer": None,
            "pre_tokenizer": pre_tokenizer, "post_processor": None,
            "decoder": {**byte_level, "add_prefix_space": True},
            "model": model}
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")


def every_split(token_ranks):
    """Merges that make `tokenizers` follow a tiktoken vocabulary {bytes: rank}.

    tiktoken merges two adjacent tokens whenever their joined bytes are a
    token, lowest rank first. As a merge list that is every split of every
    token into two tokens, ordered by the rank of the token made (then by
    the ranks of the parts); Llama 3's file was made this way. One case
    stays apart: where two merges that make the same token overlap ("aa" +
    "a" + "aa"), tiktoken takes the leftmost, `tokenizers` the one listed
    first.

    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> ranks.update({b"ab": 256, b"bc": 257, b"abc": 258})
    >>> every_split(ranks)
    [(97, 98), (98, 99), (97, 257), (256, 99)]
    """
    merges = []
    for token, _ in sorted(token_ranks.items(), key=lambda item: item[1]):
        splits = []
        for k in range(1, len(token)):
            left, right = token_ranks.get(token[:k]), token_ranks.get(token[k:])
            if left is not None and right is not None:
                splits.append((left, right))
        merges += sorted(splits)
    return merges
