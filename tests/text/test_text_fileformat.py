"""save / load: round trips, a readable file, and every way a file can be wrong."""

import pytest

from netcl_lite.text import GPT2_SPLIT_PATTERN, BPETokenizer

SAMPLE = "First Citizen:\nBefore we proceed any further, hear me speak. 👍 é\r\n"


@pytest.fixture(scope="module")
def saved(tmp_path_factory, shakespeare_tok):
    tok = BPETokenizer()
    tok._set_merges(shakespeare_tok.merges, range(256))  # a copy to add specials to
    tok.register_special_tokens({"<|endoftext|>": 700, 'quote " and # hash': 701})
    path = tmp_path_factory.mktemp("tok") / "shakespeare.bpe"
    tok.save(path)
    return tok, path


def test_round_trip(saved):
    tok, path = saved
    loaded = BPETokenizer.load(path)
    assert loaded.merges == tok.merges
    assert loaded.pattern == tok.pattern
    assert loaded.special_tokens == tok.special_tokens
    assert loaded.vocab_size == tok.vocab_size == 702
    assert loaded.encode(SAMPLE, allowed_special="all") == tok.encode(SAMPLE, "all")


def test_the_file_is_readable_text(saved):
    _, path = saved
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "netcl_lite bpe v1"
    assert lines[1].startswith('pattern "')
    assert lines[2] == "byte_ids identity"
    assert lines[3] == "special_tokens 2"
    assert lines[4] == '"<|endoftext|>" 700'
    assert lines[6] == "merges 344"
    assert lines[-1] == "end"
    assert any(line.endswith('= " the"') for line in lines)  # comments show tokens


def test_round_trip_of_a_pretrained_vocabulary(tmp_path, gpt2):
    tok = gpt2[0]
    tok.save(tmp_path / "gpt2.bpe")
    loaded = BPETokenizer.load(tmp_path / "gpt2.bpe")
    assert loaded.byte_ids == tok.byte_ids != list(range(256))  # permuted bytes
    assert loaded.pattern == GPT2_SPLIT_PATTERN
    assert loaded.encode(SAMPLE) == tok.encode(SAMPLE)


def write_changed(tmp_path, saved, change):
    """A copy of the saved file with `change(lines)` applied."""
    lines = saved[1].read_text(encoding="utf-8").split("\n")
    path = tmp_path / "broken.bpe"
    path.write_text("\n".join(change(lines)), encoding="utf-8")
    return path


def set_line(index, text):
    def change(lines):
        lines[index] = text
        return lines
    return change


@pytest.mark.parametrize("change, message", [
    (set_line(0, "netcl_lite bpe v2"), "line 1: unsupported version 'v2'"),
    (set_line(0, "{\"merges\": []}"), "line 1: not a netcl_lite tokenizer file"),
    (lambda lines: lines[:100], "truncated after line 100: expected merge 93"),
    (lambda lines: lines[:-2], "truncated after line 351: expected the final 'end'"),
    (lambda lines: lines[:-3] + ["97"], "line 351: expected 2 non-negative"),
    (lambda lines: [], "truncated after line 0: expected the header"),
    (set_line(1, "pattern '\\s+'"), "line 2: expected a JSON string"),
    (set_line(1, 'pattern "(unclosed"'), "line 2: the pattern does not compile"),
    (set_line(1, "patern \"x\""), "line 2: expected a line starting with 'pattern'"),
    (set_line(2, "byte_ids 0 1 2"), "line 3: expected 256 non-negative"),
    (set_line(3, "special_tokens two"), "line 4: expected 1 non-negative"),
    (set_line(4, "<|endoftext|> 700"), "line 5: expected \"<string>\" <id>"),
    (set_line(4, '"<|endoftext|>" 40'), "id 40 is a regular token"),
    (set_line(6, "merges 345"), "line 352: expected 2 non-negative"),
    (set_line(7, "97 9999"), "line 8: merge 0 uses an id that does not exist yet"),
    (set_line(7, "-1 2"), "line 8: expected 2 non-negative"),
    (lambda lines: lines + ["97 98"], "line 354: unexpected content after 'end'"),
])
def test_malformed_files_raise_value_error_saying_what(tmp_path, saved, change,
                                                       message):
    path = write_changed(tmp_path, saved, change)
    with pytest.raises(ValueError) as error:
        BPETokenizer.load(path)
    assert message in str(error.value)
    assert str(path) in str(error.value)


def test_binary_file_raises_value_error(tmp_path):
    path = tmp_path / "pickled.bpe"
    path.write_bytes(b"\x80\x04\x95\xff\xfe")  # what a pickle starts like
    with pytest.raises(ValueError, match="not a UTF-8 text file"):
        BPETokenizer.load(path)


def test_comments_and_blank_lines_are_ignored(tmp_path, saved):
    path = write_changed(tmp_path, saved,
                         lambda lines: ["# my tokenizer", ""] + lines[:5] + [""]
                         + lines[5:])
    assert BPETokenizer.load(path).merges == saved[0].merges
