"""Checks for chapter 01, byte-level BPE: ``check_k(your_function)``.

Each check runs your function on a few inputs, compares the result with an
independent computation (plain Python, or the library's `netcl_lite.text`)
and raises an AssertionError that says what differs. It prints "Correct!"
when all agree.
"""

import pathlib
import random

from netcl_lite.text import BPETokenizer

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "tinyshakespeare.txt"

_TOKENIZER = None


def _shakespeare_tokenizer():
    """A small tokenizer trained on 100 KB of Shakespeare (vocab 600), built once."""
    global _TOKENIZER
    if _TOKENIZER is None:
        text = DATA.read_text(encoding="utf-8")[:100_000]
        _TOKENIZER = BPETokenizer()
        _TOKENIZER.train_from_iterator([text], vocab_size=600)
    return _TOKENIZER


def _id_lists():
    """Hand-made cases (overlaps, empty, one id) and a few random lists."""
    rng = random.Random(1)
    cases = [[], [5], [1, 2, 3, 1, 2], [7, 7, 7], [7, 7, 7, 7],
             list("aaabdaaabac".encode("utf-8")), [256, 257, 256, 257, 256]]
    cases += [[rng.randrange(4) for _ in range(n)] for n in (10, 30, 60)]
    return cases


def check_1(get_stats):
    """get_stats(ids) -> {(a, b): count}, overlapping pairs included."""
    for ids in _id_lists():
        want = {}
        for i in range(len(ids) - 1):
            pair = (ids[i], ids[i + 1])
            want[pair] = want.get(pair, 0) + 1
        got = get_stats(list(ids))
        assert got is not None, "get_stats returned None: did you forget `return`?"
        assert isinstance(got, dict), f"get_stats must return a dict, got {type(got)}"
        got = {tuple(k): v for k, v in got.items() if v}
        assert got == want, (
            f"get_stats({ids}) gave {got}, want {want}"
            + ("  (overlapping pairs count: [7, 7, 7] has (7, 7) twice)"
               if ids[:3] == [7, 7, 7] else "")
        )
    print("Correct!")


def _reference_merge(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def check_2(merge):
    """merge(ids, pair, idx): left to right, occurrences never overlap."""
    cases = [([1, 2, 3, 1, 2], (1, 2), 4), ([7, 7, 7], (7, 7), 9),
             ([7, 7, 7, 7], (7, 7), 9), ([1, 2], (2, 1), 5), ([], (1, 2), 3),
             ([3], (3, 3), 4), (list(b"aaabdaaabac"), (97, 97), 256)]
    rng = random.Random(2)
    for n in (10, 40):
        ids = [rng.randrange(3) for _ in range(n)]
        cases.append((ids, (ids[0], ids[1]), 99))
    for ids, pair, idx in cases:
        before = list(ids)
        got = merge(list(ids), pair, idx)
        assert got is not None, "merge returned None: did you forget `return`?"
        want = _reference_merge(before, pair, idx)
        assert list(got) == want, (
            f"merge({before}, {pair}, {idx}) gave {list(got)}, want {want}"
            + ("  (scan left to right; a token is used by one merge only)"
               if pair[0] == pair[1] else "")
        )
    print("Correct!")


def check_3(bytes_per_token):
    """bytes_per_token(tokenizer, text) == UTF-8 bytes / number of tokens."""
    tok = _shakespeare_tokenizer()
    texts = ["To be, or not to be, that is the question.",
             "naïve café, ça va? 👋",  # more bytes than characters
             DATA.read_text(encoding="utf-8")[200_000:210_000]]
    for tokenizer in (tok, BPETokenizer()):
        for text in texts:
            got = bytes_per_token(tokenizer, text)
            assert got is not None, (
                "bytes_per_token returned None: did you forget `return`?")
            want = len(text.encode("utf-8")) / len(tokenizer.encode(text))
            assert abs(float(got) - want) < 1e-9, (
                f"bytes_per_token gave {got} for {text[:30]!r}..., want {want:.6f} "
                "(count UTF-8 bytes: len(text.encode('utf-8')), not characters)"
            )
    print("Correct!")


def check_4(which_merge):
    """which_merge(tokenizer, piece) -> (k, left bytes, right bytes)."""
    tok = _shakespeare_tokenizer()
    for k in (0, 1, 10, 57, 200, 343):
        idx = 256 + k
        left, right = tok.merges[k]
        piece = tok.decode_bytes([idx])
        want = (k, tok.decode_bytes([left]), tok.decode_bytes([right]))
        got = which_merge(tok, piece)
        assert got is not None, "which_merge returned None: did you forget `return`?"
        got = tuple(got)
        assert got == want, (
            f"which_merge(tok, {piece!r}) gave {got}, want {want} "
            f"(token {idx} is made by tok.merges[{k}] = {tok.merges[k]})"
        )
    print("Correct!")
