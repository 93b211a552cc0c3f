"""The package surface: api.md names, docstring examples, no OpenCL imports."""

import doctest
import importlib
import pathlib
import subprocess
import sys

import pytest

import netcl_lite.text

MODULES = ["patterns", "split", "naive", "train", "encode", "special", "fileformat",
           "pretrained", "tokenizer", "chat", "tokenizer_json", "oniguruma",
           "gguf_file", "tokenizer_config", "chat_template"]


def test_api_names_exist():
    for name in ("GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN", "BPETokenizer",
                 "ChatFormat"):
        assert hasattr(netcl_lite.text, name)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"netcl_lite.text.{name}")
    result = doctest.testmod(module)
    assert result.failed == 0


def test_package_docstring_example_runs():
    assert doctest.testmod(netcl_lite.text).failed == 0


def test_importing_text_touches_no_opencl():
    code = ("import sys, netcl_lite.text; "
            "bad = [m for m in sys.modules if m.startswith(('pyopencl', "
            "'netcl_lite.core', 'netcl_lite.nn', 'netcl_lite.functional'))]; "
            "assert not bad, bad")
    root = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
