"""Crafted checkpoint and tokenizer files (tests/hardening/crafted.py): each
raises a ValueError that says what is wrong, quickly and without allocating
what the file merely claims."""

import json
import time
import tracemalloc

import pytest

from crafted import CONFIG, SHAPES, checkpoint_cases, tokenizer_cases, \
    tokenizer_file, tokenizer_json, tokenizer_json_cases
from netcl_lite.core.device import manager
from netcl_lite.nn import DecoderConfig, DecoderLM, load_checkpoint
from netcl_lite.nn.checkpoint import expected_shapes
from netcl_lite.text import BPETokenizer

SECONDS = 5.0        # generous: the machine running the tests may be busy
PEAK_BYTES = 64 * 2**20


def refused_cheaply(load, message):
    """Run ``load()``; it must raise ValueError(message) within the bounds."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ValueError, match=message):
            load()
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seconds < SECONDS, f"took {seconds:.1f} s"
    assert peak < PEAK_BYTES, f"allocated {peak / 2**20:.0f} MiB"


CHECKPOINTS = checkpoint_cases()
TOKENIZERS = tokenizer_cases()
TOKENIZER_JSONS = tokenizer_json_cases()


@pytest.mark.parametrize("case", CHECKPOINTS)
def test_crafted_checkpoint(case, tmp_path):
    make, message = CHECKPOINTS[case]
    stem = make(tmp_path)
    queue = manager.default("auto").queue
    refused_cheaply(lambda: load_checkpoint(stem, queue), message)


@pytest.mark.parametrize("case", TOKENIZERS)
def test_crafted_tokenizer_file(case, tmp_path):
    make, message = TOKENIZERS[case]
    path = make(tmp_path)
    refused_cheaply(lambda: BPETokenizer.load(path), message)


@pytest.mark.parametrize("case", TOKENIZER_JSONS)
def test_crafted_tokenizer_json(case, tmp_path):
    make, message = TOKENIZER_JSONS[case]
    path = make(tmp_path)
    refused_cheaply(lambda: BPETokenizer.from_tokenizer_json(path), message)


def test_the_honest_tiny_tokenizer_json_loads(tmp_path):
    tok = BPETokenizer.from_tokenizer_json(tokenizer_json(tmp_path))
    assert tok.encode("hi!") == [104, 105, 33] and tok.vocab_size == 256


def test_the_honest_tiny_checkpoint_loads(tmp_path):
    from crafted import write_checkpoint
    stem = write_checkpoint(tmp_path, "c")
    model, _ = load_checkpoint(stem, manager.default("auto").queue)
    assert model.config == DecoderConfig(**CONFIG)


@pytest.mark.parametrize("overrides", [{}, {"n_layers": 3, "n_kv_heads": 2}])
def test_expected_shapes_match_the_model(overrides):
    config = DecoderConfig(**{**CONFIG, **overrides})
    model = DecoderLM(manager.default("auto").queue, config)
    got = {n: p.shape for n, p in model.named_parameters()}
    assert expected_shapes(config) == got
    if not overrides:
        assert got == SHAPES


def test_a_backtracking_pattern_times_out(tmp_path):
    path = tokenizer_file(tmp_path, "tok.txt", [
        "netcl_lite bpe v1", "pattern " + json.dumps("(?:a|a)*c|."),
        "byte_ids identity", "special_tokens 0", "merges 0", "end"])
    tok = BPETokenizer.load(path)          # it loads ...
    assert tok.encode("ab") == [97, 98]
    start = time.perf_counter()
    with pytest.raises(ValueError, match="took more than .*catastrophic"):
        tok.encode("a" * 40 + "b")         # ... but cannot hang an encode
    assert time.perf_counter() - start < 30


def test_from_gpt2_names_the_bad_file(tmp_path):
    encoder, merges = tmp_path / "encoder.json", tmp_path / "vocab.bpe"
    merges.write_text("#version: 0.2\n")
    for text in ('{"a": 1,', "[" * 100_000 + "]" * 100_000, '["a"]'):
        encoder.write_text(text)
        refused_cheaply(lambda: BPETokenizer.from_gpt2(encoder, merges),
                        "encoder.json")
