"""The tokenizer file: versioned, human-readable UTF-8 text (chapter 1).

A trained tokenizer is its split pattern, its merges and its special tokens.
The file spells them out one per line, so it can be read, diffed and checked
by hand; it is parsed line by line, never unpickled or evaluated:

    netcl_lite bpe v1
    pattern "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|..."
    byte_ids identity
    special_tokens 1
    "<|endoftext|>" 259
    merges 3
    97 97  # 256 = "aa"
    97 98  # 257 = "ab"
    256 257  # 258 = "aaab"
    end

Strings are JSON strings. `byte_ids` is "identity" (byte b is token b) or the
256 ids of the bytes 0..255 (pretrained vocabularies permute them). Merge i
makes token 256 + i; text after "#" is a comment. A wrong version, a missing
or malformed line or a missing "end" raises a ValueError with the line number.
So do a repeated merge or special-token id, and a pattern that
`patterns.check_pattern` refuses (too long or too deeply nested); a custom
pattern that loads still runs under a timeout (split.py).
"""

import json

from .patterns import MAX_PATTERN_CHARS, check_pattern

MAGIC = "netcl_lite bpe"
VERSION = "v1"


def write_bpe(path, pattern, byte_ids, merges, special_tokens, token_bytes):
    """Write a tokenizer; `token_bytes(id)` gives the bytes of a token for comments."""
    identity = list(byte_ids) == list(range(256))
    lines = [
        f"{MAGIC} {VERSION}",
        f"pattern {_quote(pattern)}",
        "byte_ids " + ("identity" if identity else " ".join(map(str, byte_ids))),
        f"special_tokens {len(special_tokens)}",
    ]
    for text, idx in sorted(special_tokens.items(), key=lambda item: item[1]):
        lines.append(f"{_quote(text)} {idx}")
    lines.append(f"merges {len(merges)}")
    for i, (left, right) in enumerate(merges):
        shown = token_bytes(256 + i).decode("utf-8", "backslashreplace")
        lines.append(f"{left} {right}  # {256 + i} = {_quote(shown)}")
    lines.append("end")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def read_bpe(path):
    """Read a tokenizer file -> (pattern, byte_ids, merges, special_tokens)."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a UTF-8 text file ({e})") from None
    lines = _Lines(path, text)

    header = lines.next("the header")
    if header != f"{MAGIC} {VERSION}":
        if header.startswith(MAGIC + " "):
            found = header[len(MAGIC) + 1:]
            lines.fail(f"unsupported version {found!r}; this code reads {VERSION!r}")
        lines.fail(f"not a netcl_lite tokenizer file (expected {MAGIC!r} {VERSION})")

    value = lines.keyword("pattern")
    if len(value) > 4 * MAX_PATTERN_CHARS:  # before any parsing: a cheap refusal
        lines.fail(f"the pattern line has {len(value)} characters")
    pattern = _unquote(lines, value)
    try:
        check_pattern(pattern)
    except ValueError as e:
        lines.fail(str(e))

    value = lines.keyword("byte_ids")
    if value == "identity":
        byte_ids = list(range(256))
    else:
        byte_ids = _ints(lines, value, 256)
        if sorted(byte_ids) != list(range(256)):
            lines.fail("byte_ids must be a permutation of 0..255")

    special_tokens, ids_seen = {}, {}
    for _ in range(_count(lines, lines.keyword("special_tokens"))):
        line = lines.next("a special token line")
        try:
            name, end = json.JSONDecoder().raw_decode(line)
        except (json.JSONDecodeError, RecursionError):
            lines.fail(f'expected "<string>" <id>, got {line[:80]!r}')
        (idx,) = _ints(lines, line[end:], 1)
        if not isinstance(name, str) or name in special_tokens:
            lines.fail(f"bad or repeated special token {name!r}")
        if idx in ids_seen:
            lines.fail(f"special token {name!r} repeats the id {idx} of "
                       f"{ids_seen[idx]!r}")
        special_tokens[name] = idx
        ids_seen[idx] = name

    merges, seen = [], {}
    for i in range(_count(lines, lines.keyword("merges"))):
        line = lines.next(f"merge {i} (token {256 + i})")
        left, right = _ints(lines, line.split("#", 1)[0], 2)
        if max(left, right) >= 256 + i:
            lines.fail(f"merge {i} uses an id that does not exist yet")
        if (left, right) in seen:  # the second copy could never be produced
            lines.fail(f"merge {i} repeats merge {seen[left, right]} "
                       f"({left} {right})")
        seen[left, right] = i
        merges.append((left, right))

    if lines.next("the final 'end'") != "end":
        lines.fail("expected 'end' after the last merge")
    lines.expect_eof()
    return pattern, byte_ids, merges, special_tokens


class _Lines:
    """Non-blank, non-comment lines with their numbers, for error messages."""

    def __init__(self, path, text):
        self.path = path
        self.items = [
            (number, line.rstrip("\r"))
            for number, line in enumerate(text.split("\n"), start=1)
            if line.strip() and not line.startswith("#")
        ]
        self.pos = 0
        self.number = 0

    def fail(self, message):
        raise ValueError(f"{self.path}, line {self.number}: {message}")

    def next(self, what):
        if self.pos == len(self.items):
            raise ValueError(
                f"{self.path}: the file is truncated after line {self.number}: "
                f"expected {what}"
            )
        self.number, line = self.items[self.pos]
        self.pos += 1
        return line

    def keyword(self, name):
        """Read a line "name value" and return value."""
        line = self.next(f"the {name!r} line")
        word, _, value = line.partition(" ")
        if word != name:
            self.fail(f"expected a line starting with {name!r}, got {line!r}")
        return value

    def expect_eof(self):
        if self.pos < len(self.items):
            self.next("")
            self.fail("unexpected content after 'end'")


def _quote(text):
    return json.dumps(text, ensure_ascii=False)


def _unquote(lines, value):
    try:
        text = json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        text = None
    if not isinstance(text, str):
        lines.fail(f"expected a JSON string, got {value[:80]!r}")
    return text


def _ints(lines, value, n):
    fields = value.split()
    if len(fields) != n or not all(
            f.isdigit() and f.isascii() and len(f) <= 12 for f in fields):
        lines.fail(f"expected {n} non-negative integer(s), got "
                   f"{value.strip()[:80]!r}")
    return [int(f) for f in fields]


def _count(lines, value):
    (n,) = _ints(lines, value, 1)
    return n
