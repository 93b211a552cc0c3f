"""`BPETokenizer`: byte-level BPE with special tokens, files and GPT vocabularies.

Chapter 1 builds it from the pieces in this folder:

    patterns.py    how text is cut into chunks before BPE
    split.py       the same cut, faster on (mostly) ASCII text
    naive.py       the teaching trainer (get_stats, merge)
    train.py       the same merges, fast (dedupe + index + lazy heap)
    encode.py      merging one chunk by rank (heap + linked list)
    batch.py       merging many new chunks at once (numpy)
    cache.py       the chunk cache: each distinct chunk merged once
    special.py     control strings such as "<|endoftext|>"
    fileformat.py  save / load
    pretrained.py  reading GPT-2 and tiktoken vocabulary files
    vocabularies.py  finding them by name (from_pretrained)
    tokenizer_json.py  Hugging Face's tokenizer.json, both ways
    tokenizer_config.py  its tokenizer_config.json: chat template, named tokens
    gguf_file.py   the tokenizer inside a GGUF model file
    chat_template.py  a model's own chat template (chat.py uses it)

    >>> tok = BPETokenizer()
    >>> tok.train_from_iterator(["aaabdaaabac"], vocab_size=259)
    >>> tok.merges
    [(97, 97), (97, 98), (256, 257)]
    >>> tok.encode("aaabdaaabac")
    [258, 100, 258, 97, 99]
    >>> tok.decode([258, 100])
    'aaabd'

Lone surrogates (``"\\ud800"``, e.g. half of an emoji from broken JSON)
have no UTF-8 bytes, so encoding (or training on) a text that contains one
raises a ValueError naming its position; nothing is silently replaced.
Encoding anything but a str raises a TypeError; decoding anything but int
ids too.
"""

import numbers
import pathlib
from itertools import repeat
from operator import add

import numpy as np

from .batch import NONE, PairMemo, merge_packed
from .cache import ChunkCache, pack, unpack
from .encode import SHORT, merge_by_rank, merge_bytes_by_rank
from .fileformat import read_bpe, write_bpe
from .gguf_file import read_gguf_tokenizer
from .patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, check_pattern
from .pretrained import (PairRanks, check_ranks, merges_from_ranks, read_gpt2,
                         read_tiktoken_ranks)
from .special import allowed_specials, special_splitter
from .split import Splitter, lone_surrogate_error
from .tokenizer_config import end_ids, read_tokenizer_config
from .tokenizer_json import every_split, read_tokenizer_json, write_tokenizer_json
from .train import train_bpe
from .vocabularies import find_files

_CACHE_SIZE = 100_000  # chunks remembered (besides whole tokens) before starting over
_BLOCK = 1 << 18  # chunks looked up at a time
_BATCH = 64  # this many new short chunks or more are merged together (batch.py)


class BPETokenizer:
    """Byte-level BPE: text -> regex chunks -> UTF-8 bytes -> merged token ids.

    Token ids: the 256 bytes, then merge i is token 256 + i, then the special
    tokens at the ids they were registered with. (A `tokenizer.json` or a
    GGUF file may number its tokens otherwise; `from_tokenizer_json` and
    `from_gguf` keep its ids.)

    A tokenizer read from a model's file (`from_gguf`, `from_tokenizer_json`)
    also knows what the file says about its tokens; the course's own
    tokenizers leave these empty:

    - `chat_template`: the model's Jinja chat template, or None
      (`ChatFormat` renders it);
    - `special_ids`: the ids the file names, e.g. {"bos": 1, "eos": 2,
      "unk": 0, "pad": 2} for SmolLM2;
    - `end_of_text_id`, `end_of_turn_id`: the ids that end a document and a
      chat turn (gguf_file.end_ids: SmolLM2's are 0, "<|endoftext|>", and
      2, "<|im_end|>"), or None; `stop_ids` lists them for generation;
    - `dropped_bytes`: the bytes its vocabulary lacks, which encoding drops
      from the text, as the model's own tokenizers do (`b""` for the course's
      tokenizers, which keep every byte).
    """

    def __init__(self, pattern=GPT4_SPLIT_PATTERN):
        self.pattern = check_pattern(pattern)
        self._split = Splitter(pattern)  # = regex.findall(pattern, text), faster
        self._special_tokens = {}  # str -> id
        self.chat_template = None
        self.special_ids = {}
        self.end_of_text_id = self.end_of_turn_id = None
        self._set_merges([], range(256))

    def _set_merges(self, merges, byte_ids):
        """Install a model: merges [(left, right), ...], byte_ids[b] = id of byte b."""
        self._merges = [tuple(pair) for pair in merges]
        if len(set(self._merges)) != len(self._merges):
            seen = set()
            twice = next(p for p in self._merges if p in seen or seen.add(p))
            raise ValueError(f"the merge {twice} appears twice; the second copy "
                             "could never produce its token")
        self._token_ranks = None
        self._set_byte_ids(byte_ids)
        self._ranks = {pair: 256 + i for i, pair in enumerate(self._merges)}
        self._made = None  # merge i makes token 256 + i: its rank is its id
        vocab = {idx: bytes([b]) for b, idx in enumerate(self.byte_ids)}
        for i, (left, right) in enumerate(self._merges):
            vocab[256 + i] = vocab[left] + vocab[right]
        self._set_vocab(vocab)

    def _set_bpe(self, vocab, byte_ids, merges, made):
        """Install a model whose ids follow no fixed layout (a tokenizer.json).

        vocab {id: bytes} holds every regular token, merges [(left, right),
        ...] are in rank order and made[rank] is the id merge `rank` makes.
        byte_ids[b] is None where the vocabulary lacks the byte b.
        """
        self._merges = [tuple(pair) for pair in merges]
        self._token_ranks = None
        self._set_byte_ids(byte_ids)
        if all(a < b for a, b in zip(made, made[1:])):
            # ids grow with the rank, so the id itself can stand for the rank
            self._ranks = dict(zip(self._merges, made))
            self._made = None
        else:  # e.g. several merges make one token (Llama 3)
            self._ranks = {pair: rank for rank, pair in enumerate(self._merges)}
            self._made = list(made)
        self._set_vocab(dict(vocab))

    def _set_token_ranks(self, token_ranks):
        """Install a tiktoken vocabulary {token bytes: rank}, ranks = ids.

        Its merges are rebuilt only if someone reads `.merges`; encoding
        merges two tokens when their joined bytes are a token: a short chunk
        on its bytes (encode.merge_bytes_by_rank), a long one by id through
        PairRanks.
        """
        self._merges = None
        self._token_ranks = token_ranks
        self._set_byte_ids([token_ranks[bytes([b])] for b in range(256)])
        vocab = {rank: token for token, rank in token_ranks.items()}
        self._ranks = PairRanks(token_ranks, vocab)
        self._made = None
        self._set_vocab(vocab)

    def _set_byte_ids(self, byte_ids):
        """byte_ids[b]: the id of the byte b, or None where a real model's
        vocabulary lacks it (then encoding drops that byte from the text)."""
        self.byte_ids = list(byte_ids)
        self._dropped = bytes(b for b, idx in enumerate(self.byte_ids) if idx is None)
        # what merging reads: a missing byte never gets there, any id will do
        self._byte_table = [0 if idx is None else idx for idx in self.byte_ids]

    @property
    def dropped_bytes(self):
        """The bytes the vocabulary lacks, which `encode` drops (usually none).

        SmolLM2's vocabulary lacks 21 bytes, among them 0x04 and 0xF5-0xFF.
        Its own tokenizers (transformers, llama.cpp) drop such a byte, so
        ``"a\\x04b"`` encodes as the ids of ``"a"`` and ``"b"``; so does
        this one, to give the model the ids it was trained on. Decoding then
        cannot give the byte back. Like transformers, it drops the byte before
        merging, so that its neighbours in a chunk may merge
        (``"!\\x04!"`` gives the one id of ``"!!"``); llama.cpp drops it
        after merging and gives two. Every tokenizer trained or saved by this
        library keeps all 256 bytes.
        """
        return self._dropped

    @property
    def stop_ids(self):
        """The end-of-turn, end-of-text and eos ids of a model's file, each
        once (a tuple); () for the course's own tokenizers. Generation stops
        at any of them."""
        ids = (self.end_of_turn_id, self.end_of_text_id, self.special_ids.get("eos"))
        return tuple(dict.fromkeys(idx for idx in ids if idx is not None))

    @property
    def merges(self):
        """[(left id, right id), ...] in rank order: merge i made token 256 + i
        (in a tokenizer.json, the token of the two joined)."""
        if self._merges is None:  # a tiktoken vocabulary: rebuild them once
            self._merges = merges_from_ranks(self._token_ranks)[1]
        return self._merges

    def _set_vocab(self, vocab):
        self._vocab = vocab  # regular id -> bytes
        self._regular_size = max(vocab) + 1  # ids 0.._regular_size - 1 (may have gaps)
        self._id_to_bytes = dict(vocab)  # every id, special ones included
        for text, idx in self._special_tokens.items():
            self._id_to_bytes[idx] = text.encode("utf-8")
        self._whole_tokens = {}  # chunk -> packed id; tiktoken's, ignore_merges' rule
        # chunk -> packed ids, new ones merged in `join`; holds the whole tokens too
        self._cache = ChunkCache(self._encode_chunks)
        self._batch = None  # what batch.py needs to know of the model
        self._special_split = {}  # frozenset of allowed specials -> compiled split

    @property
    def vocab_size(self):
        """Largest id + 1, special tokens included: the rows an embedding needs."""
        return max([self._regular_size,
                    *(i + 1 for i in self._special_tokens.values())])

    @property
    def special_tokens(self):
        """{string: id} of the registered special tokens (a copy)."""
        return dict(self._special_tokens)

    def __repr__(self):
        merges = (len(self._vocab) - 256 if self._merges is None
                  else len(self._merges))
        return (f"BPETokenizer(vocab_size={self.vocab_size}, "
                f"merges={merges}, "
                f"special_tokens={len(self._special_tokens)})")

    # ---- training ------------------------------------------------------------

    def train_from_iterator(self, texts, vocab_size=512, min_frequency=2,
                            show_progress=False):
        """Learn merges from an iterable of strings (a single string also works).

        Stops early when no pair occurs `min_frequency` times, so a tiny
        corpus gives a small vocabulary instead of an error. Replaces any
        earlier merges; special tokens must have ids >= vocab_size.
        """
        if vocab_size < 256:
            raise ValueError(f"vocab_size must be at least 256, got {vocab_size}")
        clashes = {t: i for t, i in self._special_tokens.items() if i < vocab_size}
        if clashes:
            raise ValueError(f"special tokens {clashes} have ids below vocab_size="
                             f"{vocab_size}; register them after training")
        merges = train_bpe(texts, vocab_size, self.pattern, min_frequency,
                           show_progress)
        self._set_merges(merges, range(256))

    # ---- special tokens ----------------------------------------------------

    def register_special_tokens(self, tokens):
        """Add special tokens {string: id}; ids must not be regular token ids."""
        self._register_special_tokens(tokens)

    def _register_special_tokens(self, tokens, shared=False):
        """`shared`: a special token may also be the regular token of its own
        bytes (a tokenizer.json trained by `tokenizers` lists it in both)."""
        if not isinstance(tokens, dict):
            raise ValueError(f"special tokens are a dict {{str: id}}, got "
                             f"{type(tokens).__name__}")
        first = {}
        for text, idx in tokens.items():
            if isinstance(idx, int) and idx in first:
                raise ValueError(f"special tokens {first[idx]!r} and {text!r} "
                                 f"share the id {idx}")
            first.setdefault(idx, text)
        for text, idx in tokens.items():
            if not isinstance(text, str) or not text:
                raise ValueError(f"a special token must be a non-empty str: {text!r}")
            if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
                raise ValueError(f"special token {text!r}: bad id {idx!r}")
            if idx in self._vocab and not (
                    shared and self._vocab[idx] == text.encode("utf-8")):
                raise ValueError(f"special token {text!r}: id {idx} is a regular "
                                 f"token (regular ids are 0..{self._regular_size - 1})")
            for other, other_idx in self._special_tokens.items():
                if (other == text) != (other_idx == idx):
                    raise ValueError(f"special token {text!r} -> {idx} clashes with "
                                     f"{other!r} -> {other_idx}")
        for text, idx in tokens.items():
            self._special_tokens[text] = idx
            self._id_to_bytes[idx] = text.encode("utf-8")
        self._special_split.clear()

    # ---- encoding ------------------------------------------------------------

    def encode_ordinary(self, text):
        """Encode `text` with BPE only; special-token strings are plain text.

        A lone surrogate in `text` raises ValueError (see the module docstring).

        >>> BPETokenizer().encode_ordinary("hi!")
        [104, 105, 33]
        """
        _check_text(text)
        try:
            return self._encode_ordinary(text)
        except UnicodeEncodeError:
            raise lone_surrogate_error(text) from None

    def encode(self, text, allowed_special=()):
        """Encode `text`; the special tokens in `allowed_special` ("all" or a set)
        become their ids, any other special-looking string stays plain text.
        """
        _check_text(text)
        if allowed_special == "all":  # the common case: no set to build
            key = "all"
        else:
            key = frozenset(allowed_specials(allowed_special,
                                             self._special_tokens))
            if not key:
                return self.encode_ordinary(text)
        split = self._special_split.get(key)
        if split is None:  # compiled once per set of allowed specials
            allowed = allowed_specials(allowed_special, self._special_tokens)
            if not allowed:
                return self.encode_ordinary(text)
            split = self._special_split[key] = special_splitter(allowed)
        ids = []
        try:
            # odd pieces are allowed special strings, even pieces ordinary text
            for i, piece in enumerate(split(text)):
                if i % 2:
                    ids.append(self._special_tokens[piece])
                else:
                    ids += self._encode_ordinary(piece)
        except UnicodeEncodeError:
            raise lone_surrogate_error(text) from None
        return ids

    def _encode_ordinary(self, text):
        """Split, then look every chunk up in the cache (cache.py).

        Most chunks repeat, so the work per chunk is a dictionary lookup, and
        a chunk the cache lacks is merged during that same lookup. The ids
        are packed as bytes, so that joining them is one `bytes.join` and
        unpacking one `array.tolist`: every loop over the chunks runs in C.
        It goes one block of chunks at a time, so the cache never holds more
        than a block beyond its size.
        """
        cache = self._cache
        chunks = self._split(text)
        packed = []
        for start in range(0, len(chunks), _BLOCK):
            block = chunks[start:start + _BLOCK] if len(chunks) > _BLOCK else chunks
            packed.append(cache.join(block))
            if len(cache) > len(self._whole_tokens) + _CACHE_SIZE:
                cache.clear()  # start over, keeping the whole tokens
                cache.update(self._whole_tokens)
        return unpack(b"".join(packed))

    def _encode_chunks(self, chunks):
        """New chunks -> their packed ids: enough short ones are merged
        together (batch.py), the rest one by one."""
        raws = [chunk.encode("utf-8") for chunk in chunks]
        if self._dropped:  # bytes the vocabulary lacks: gone before merging
            raws = [raw.translate(None, self._dropped) for raw in raws]
        short = [0 < len(raw) <= SHORT for raw in raws]
        if sum(short) < _BATCH:
            return [pack(self._merge_bytes(raw)) for raw in raws]
        merged = iter(merge_packed([raw for raw, s in zip(raws, short) if s],
                                   self._byte_table, *self._batch_model()))
        return [next(merged) if s else pack(self._merge_bytes(raw))
                for raw, s in zip(raws, short)]

    def _batch_model(self):
        """(rank_of, made, finish) for batch.merge_packed; made once per model."""
        if self._batch is None:
            ranks = (PairMemo.of_merges(self._ranks) if self._token_ranks is None
                     else PairMemo(self._joined_ranks))  # no merge list to read
            made = None if self._made is None else np.asarray(self._made, np.int64)
            self._batch = (ranks, made, self._finish)
        return self._batch

    def _joined_ranks(self, left, right):
        """tiktoken's: (k,) left, (k,) right ids -> (k,) joined bytes' ranks."""
        vocab = self._vocab
        joined = map(add, map(vocab.__getitem__, left.tolist()),
                     map(vocab.__getitem__, right.tolist()))
        return np.fromiter(map(self._token_ranks.get, joined, repeat(NONE)),
                           np.int64, len(left))

    def _finish(self, ids):
        """batch.py's finish: (k,) partly merged ids -> the merged ids."""
        if self._token_ranks is not None:  # its bytes again: faster than PairRanks
            return self._merge_bytes(b"".join(map(self._vocab.__getitem__,
                                                  ids.tolist())))
        return merge_by_rank(ids.tolist(), self._ranks, self._made)

    def _merge_bytes(self, raw):
        """One chunk's UTF-8 bytes -> its ids, merged by rank."""
        if self._token_ranks is not None and len(raw) <= SHORT:
            return merge_bytes_by_rank(raw, self._token_ranks)  # tiktoken's form
        byte_ids = self._byte_table
        return merge_by_rank(list(map(byte_ids.__getitem__, raw)),
                             self._ranks, self._made)

    def _use_whole_tokens(self, ids=None):
        """tiktoken's rule: a chunk that is itself a token encodes as that token.

        For GPT-2 and cl100k this is part of the definition (tiktoken checks the
        whole chunk before merging), and most chunks of English are whole
        tokens, so it also skips most merge work. A tokenizer trained here does
        not use it: merging by rank may split such a chunk differently. In a
        tokenizer.json it is `ignore_merges`; `ids` are the tokens it applies to.
        """
        whole = {}
        for idx in self._vocab if ids is None else ids:
            raw = self._vocab[idx]
            try:
                whole[raw.decode("utf-8")] = pack([idx])
            except UnicodeDecodeError:
                pass  # a token that is part of a character is never a whole chunk
        self._whole_tokens = whole
        self._cache.update(whole)  # so a cache hit also covers whole tokens

    # ---- decoding ------------------------------------------------------------

    def decode_bytes(self, ids):
        """Token ids -> the bytes they stand for.

        >>> BPETokenizer().decode_bytes([104, 105])
        b'hi'
        """
        id_to_bytes = self._id_to_bytes
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"decode takes a sequence of int ids, got "
                            f"{type(ids).__name__}")
        if not isinstance(ids, (list, tuple)):
            ids = list(ids)  # we may read it twice (numpy arrays, generators)
        for kind in set(map(type, ids)):  # 1.0 or True would find id 1
            if kind is bool or not issubclass(kind, numbers.Integral):
                bad = next(idx for idx in ids if type(idx) is kind)
                raise TypeError(f"token ids are ints, got {bad!r} "
                                f"({kind.__name__})")
        try:
            return b"".join([id_to_bytes[idx] for idx in ids])
        except (KeyError, TypeError):
            pass
        for idx in ids:  # name the culprit
            if idx not in id_to_bytes:
                raise ValueError(f"unknown token id {idx!r}: not in the vocabulary "
                                 f"of {self!r}") from None
        raise AssertionError("unreachable")

    def decode(self, ids):
        """Token ids -> text; bytes that are not valid UTF-8 become U+FFFD.

        >>> tok = BPETokenizer()
        >>> tok.decode(tok.encode("é")[:1])  # half of a two-byte character
        '\ufffd'
        """
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # ---- files ---------------------------------------------------------------

    def save(self, path):
        """Write the tokenizer as versioned UTF-8 text (see fileformat.py)."""
        if self._made is not None or not self._canonical():
            raise ValueError(
                f"{self!r} numbers its tokens unlike a netcl_lite file (the 256 "
                "bytes as ids 0..255, then merge i = token 256 + i); "
                "save_tokenizer_json keeps its ids")
        write_bpe(path, self.pattern, self.byte_ids, self.merges,
                  self._special_tokens, self._vocab.__getitem__)

    def _canonical(self):
        """Bytes at ids 0..255, merge i = token 256 + i, no other token."""
        if self._merges is None:
            return True  # a tiktoken vocabulary: ranks 0, 1, 2, ... (check_ranks)
        n = 256 + len(self._merges)
        return (not self._dropped and sorted(self.byte_ids) == list(range(256))
                and len(self._vocab) == n
                and self._regular_size == n
                and all(self._ranks[pair] == 256 + i
                        for i, pair in enumerate(self._merges)))

    def save_tokenizer_json(self, path):
        """Write Hugging Face's tokenizer.json: `tokenizers.Tokenizer.from_file`
        encodes with the same ids (`add_special_tokens=False`, special tokens
        as added tokens). See tokenizer_json.py."""
        if self._merges is None and self._token_ranks is not None:
            merges = every_split(self._token_ranks)  # see tokenizer_json.py
        else:
            merges = self.merges
        write_tokenizer_json(path, self.pattern, self._vocab, merges,
                             self._special_tokens, bool(self._whole_tokens))

    @classmethod
    def load(cls, path):
        """Read a file written by `save`; a malformed file raises ValueError."""
        pattern, byte_ids, merges, special_tokens = read_bpe(path)
        return cls._build(pattern, byte_ids, merges, special_tokens, path)

    @classmethod
    def from_tokenizer_json(cls, path):
        """A byte-level BPE in Hugging Face's tokenizer.json form, with its ids.

        Reads the ByteLevel pre-tokenizer, or a Split regex (Llama 3, Qwen2)
        or Digits (SmolLM) before it, `added_tokens` as special tokens and
        `ignore_merges`; anything else that could change the ids raises a
        ValueError naming the field (see tokenizer_json.py). `encode(text,
        allowed_special="all")` then gives `tokenizers`' `encode(text,
        add_special_tokens=False).ids`. Bytes the vocabulary lacks are
        dropped from the text, as `tokenizers` does (`dropped_bytes`).

        A `tokenizer_config.json` beside it gives the chat template (or a
        `chat_template.jinja` there) and the named tokens (`special_ids`):
        tokenizer_config.py.
        """
        model = read_tokenizer_json(path)
        tok = cls(model.pattern)
        tok._set_bpe(model.vocab, model.byte_ids, model.merges, model.made)
        if model.ignore_merges:
            tok._use_whole_tokens(model.whole)
        try:
            tok._register_special_tokens(model.special_tokens, shared=True)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        by_bytes = None

        def id_of(text):  # a token named in tokenizer_config.json, by its text
            nonlocal by_bytes
            if text in tok._special_tokens:
                return tok._special_tokens[text]
            if by_bytes is None:
                by_bytes = {raw: idx for idx, raw in tok._vocab.items()}
            return by_bytes.get(text.encode("utf-8", errors="replace"))

        template, special_ids = read_tokenizer_config(pathlib.Path(path).parent,
                                                      id_of)
        tok._set_model_facts(template, special_ids)
        return tok

    @classmethod
    def from_gguf(cls, path):
        """The tokenizer inside a GGUF model file, with the model's own ids.

        Reads tokens, merges, token types, the split (`tokenizer.ggml.pre`:
        "smollm", "gpt2" or "llama-bpe"), control and user-defined tokens as
        special tokens, the ids the file names and the chat template, with
        the `gguf` package (gguf_file.py). `path` may also be a
        `gguf.GGUFReader` that is open already, so that a model and its
        tokenizer read the file once. A tokenizer of another kind
        (SentencePiece), an unknown split, a missing or mistyped field or a
        merge of tokens the file lacks raises a ValueError naming it.

        `encode(text)` keeps special-token strings as text, `encode(text,
        allowed_special="all")` gives transformers' ids for the same file.
        Bytes the vocabulary lacks are dropped (`dropped_bytes`).

        >>> path = "SmolLM2-135M-Instruct.Q4_1.gguf"
        >>> tok = BPETokenizer.from_gguf(path)          # doctest: +SKIP
        >>> tok.encode("Hi 2026")                       # doctest: +SKIP
        [26843, 216, 34, 32, 34, 38]
        >>> tok.end_of_text_id, tok.end_of_turn_id      # doctest: +SKIP
        (0, 2)
        """
        model = read_gguf_tokenizer(path)
        tok = cls(model.pattern)
        tok._set_bpe(model.vocab, model.byte_ids, model.merges, model.made)
        if model.ignore_merges:
            tok._use_whole_tokens(model.whole)
        # each is also the regular token of its own text (gguf_file.py)
        tok._register_special_tokens(model.special_tokens, shared=True)
        tok._set_model_facts(model.chat_template, model.special_ids)
        return tok

    def _set_model_facts(self, chat_template, special_ids):
        """What a model's file says beyond the vocabulary (see the class)."""
        self.chat_template = chat_template
        self.special_ids = dict(special_ids)
        self.end_of_text_id, self.end_of_turn_id = end_ids(self._special_tokens,
                                                           self.special_ids)

    @classmethod
    def from_pretrained(cls, name, directory=None):
        """"gpt2", "cl100k_base" or "o200k_base", with tiktoken's ids.

        The files are found offline first: `directory` (or the folder in
        NETCL_VOCAB_DIR), tiktoken's cache, an installed package that ships
        them; else they are downloaded and checked against their published
        hashes. See vocabularies.py for the order and the variables.

        >>> tok = BPETokenizer.from_pretrained("gpt2")  # doctest: +SKIP
        >>> tok.encode("Hello world")                   # doctest: +SKIP
        [15496, 995]
        """
        vocab, files = find_files(name, directory)
        if vocab.name == "gpt2":
            return cls.from_gpt2(*files)
        return cls.from_tiktoken(files[0], pattern=vocab.pattern,
                                 special_tokens=vocab.special_tokens)

    @classmethod
    def from_gpt2(cls, encoder_json, vocab_bpe):
        """GPT-2's `encoder.json` + `vocab.bpe`; ids equal tiktoken's "gpt2"."""
        byte_ids, merges, special_tokens = read_gpt2(encoder_json, vocab_bpe)
        return cls._build(GPT2_SPLIT_PATTERN, byte_ids, merges, special_tokens,
                          encoder_json, source_is_tiktoken=True)

    @classmethod
    def from_tiktoken(cls, path, pattern=GPT4_SPLIT_PATTERN, special_tokens=None):
        """A tiktoken rank file such as cl100k_base.tiktoken (gzipped or not)."""
        ranks = read_tiktoken_ranks(path)
        try:
            check_ranks(ranks)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        return cls._build(pattern, ranks, None, special_tokens or {}, path,
                          source_is_tiktoken=True)

    @classmethod
    def _build(cls, pattern, byte_ids, merges, special_tokens, source,
               source_is_tiktoken=False):
        """byte_ids + merges, or (merges None) a tiktoken {bytes: rank} dict."""
        tok = cls(pattern)
        if merges is None:
            tok._set_token_ranks(byte_ids)
        else:
            tok._set_merges(merges, byte_ids)
        if source_is_tiktoken:
            tok._use_whole_tokens()
        try:
            tok.register_special_tokens(special_tokens)
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None
        return tok


def _check_text(text):
    if not isinstance(text, str):
        hint = " (decode the bytes first)" if isinstance(
            text, (bytes, bytearray, memoryview)) else ""
        raise TypeError(f"encode expects a str, got {type(text).__name__}{hint}")
