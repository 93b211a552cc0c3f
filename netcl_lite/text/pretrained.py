"""Reading the GPT-2 and GPT-4 (cl100k_base) vocabularies (chapter 1).

Both give the same three things a `BPETokenizer` needs: the id of each of the
256 bytes, the merges in order, and the special tokens. They store them
differently:

- GPT-2 ships `encoder.json` (token string -> id) and `vocab.bpe` (one merge
  per line, "Ġ t"). Tokens are spelled with printable stand-ins for bytes,
  the `bytes_to_unicode` table: the space byte 0x20 is written "Ġ".
- tiktoken ships one rank file, "base64(token bytes) rank" per line, and no
  merges at all. Encoding does not need them: two tokens merge when their
  joined bytes are a token, lowest rank first, as tiktoken does (on the
  bytes for a short chunk, `encode.merge_bytes_by_rank`; by id through
  `PairRanks` for a long one).
  `merges_from_ranks` rebuilds them when asked: a token of rank r is what
  BPE makes of its own bytes using only the tokens ranked below r, and the
  last step of that run is its merge.

In both, the single bytes are not ids 0..255 in byte order ("!" is id 0),
hence the byte permutation `byte_ids`.

With either vocabulary the ids equal tiktoken's, with one caveat that lives
in the split, not here: `\\p{L}` means whatever the Unicode tables of the
regex engine say. The `regex` package follows the newest Unicode release,
tiktoken's Rust engine an older one, so a code point that only the newer
tables call a letter (U+3D000 with regex 2026.11 against tiktoken 0.14)
can be cut differently, and its ids can differ. Every character assigned
in Python's own Unicode database splits as in tiktoken; the tests check
each one (tests/text/test_text_pretrained.py).
"""

import base64
import gzip
import json


def bytes_to_unicode():
    """GPT-2's byte -> printable character table.

    Printable Latin-1 bytes stand for themselves; the others (control bytes,
    space, ...) are shifted to chr(256 + k):

    >>> table = bytes_to_unicode()
    >>> table[ord("a")], table[ord(" ")], table[ord("\\n")]
    ('a', 'Ġ', 'Ċ')
    """
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


def read_gpt2(encoder_json, vocab_bpe):
    """GPT-2 files -> (byte_ids, merges, special_tokens)."""
    try:
        with open(encoder_json, encoding="utf-8") as f:
            encoder = json.load(f)  # token string -> id
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"{encoder_json}: not a valid JSON file ({e!r})") from None
    if not isinstance(encoder, dict) or not all(
            type(i) is int for i in encoder.values()):
        raise ValueError(f"{encoder_json}: expected a JSON object "
                         "{token string: int id}")
    try:
        with open(vocab_bpe, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except UnicodeDecodeError as e:
        raise ValueError(f"{vocab_bpe}: not a UTF-8 text file ({e})") from None
    if not lines[0].startswith("#version"):
        raise ValueError(f"{vocab_bpe}: expected a '#version' first line")
    table = bytes_to_unicode()
    try:
        byte_ids = [encoder[table[b]] for b in range(256)]
        merges = []
        for number, line in enumerate(lines[1:], start=2):
            if not line:
                continue
            fields = line.split(" ")
            if len(fields) != 2:
                raise ValueError(f"{vocab_bpe}, line {number}: expected "
                                 f"'left right', got {line[:60]!r}")
            left, right = fields
            if encoder[left + right] != 256 + len(merges):
                raise ValueError(
                    f"{vocab_bpe}, line {number}: {left + right!r} has id "
                    f"{encoder[left + right]} in {encoder_json}, expected "
                    f"{256 + len(merges)}"
                )
            merges.append((encoder[left], encoder[right]))
    except KeyError as e:
        raise ValueError(f"{encoder_json}: no id for the token {e}") from None
    if sorted(byte_ids) != list(range(256)):
        raise ValueError(f"{encoder_json}: the 256 bytes must have ids 0..255")
    n_regular = 256 + len(merges)
    special_tokens = {tok: idx for tok, idx in encoder.items() if idx >= n_regular}
    return byte_ids, merges, special_tokens  # GPT-2: {"<|endoftext|>": 50256}


def read_tiktoken_ranks(path):
    """A tiktoken rank file (optionally gzipped) -> {token bytes: rank}."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":  # the gzip magic number
        data = gzip.decompress(data)
    ranks = {}
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError:  # wrong field count, bad base64, bad integer
            raise ValueError(
                f"{path}, line {number}: expected 'base64 rank', got {line[:60]!r}"
            ) from None
    return ranks


def check_ranks(ranks):
    """A tiktoken vocabulary must rank its tokens 0, 1, 2, ... with the 256
    single bytes first; anything else raises ValueError."""
    by_rank = sorted(ranks, key=ranks.get)
    if [ranks[t] for t in by_rank] != list(range(len(by_rank))):
        raise ValueError("ranks must be 0, 1, 2, ... without gaps or repeats")
    if sorted(len(t) for t in by_rank[:256]) != [1] * 256:
        raise ValueError("ranks 0..255 must be the 256 single bytes")
    return by_rank


class PairRanks:
    """tiktoken's merge rule as a lookup: (left id, right id) -> the rank of
    the joined bytes, or None when they are not a token.

    A tiktoken file lists tokens, not merges. Encoding needs only this
    lookup, so a vocabulary loads without `merges_from_ranks`, which runs
    BPE once per token (seconds for o200k_base).

    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> ranks[b"ab"] = 256
    >>> vocab = {r: t for t, r in ranks.items()}
    >>> PairRanks(ranks, vocab).get((97, 98)), PairRanks(ranks, vocab).get((98, 97))
    (256, None)
    """

    def __init__(self, ranks, vocab):
        self._ranks, self._vocab = ranks, vocab  # bytes -> rank, id -> bytes

    def get(self, pair, default=None):
        left, right = self._vocab.get(pair[0]), self._vocab.get(pair[1])
        if left is None or right is None:  # not a token id (merge_by_rank's -1)
            return default
        return self._ranks.get(left + right, default)


def merges_from_ranks(ranks):
    """{token bytes: rank} -> (byte_ids, merges), with merge i making rank 256 + i.

    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> ranks[b"a"], ranks[b"b"] = 98, 97  # swap: bytes are not in byte order
    >>> ranks.update({b"ab": 256, b"abb": 257})
    >>> byte_ids, merges = merges_from_ranks(ranks)
    >>> byte_ids[ord("a")], byte_ids[ord("b")], merges
    (98, 97, [(98, 97), (256, 97)])
    """
    by_rank = check_ranks(ranks)
    byte_ids = [ranks[bytes([b])] for b in range(256)]
    merges = []
    for rank in range(256, len(by_rank)):
        left, right = _last_merge(by_rank[rank], ranks, rank)
        merges.append((ranks[left], ranks[right]))
    return byte_ids, merges


def _last_merge(token, ranks, max_rank):
    """Run BPE on `token`'s bytes with the tokens ranked below `max_rank`.

    It must stop at two parts: those are the pair that merges into `token`.
    """
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best_rank, best = max_rank, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], max_rank)
            if rank < best_rank:
                best_rank, best = rank, i
        if best < 0:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    if len(parts) != 2:
        raise ValueError(f"token {token!r} (rank {max_rank}) is not a merge of two "
                         f"lower-ranked tokens")
    return parts
