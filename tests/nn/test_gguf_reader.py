"""netcl_lite/formats/gguf_reader.py: the one GGUF reader that the model
(DecoderLM.from_gguf) and the tokenizer (BPETokenizer.from_gguf) share.

It must read what gguf's own reader reads, refuse a damaged file with the
same words whichever side opens it, and stay a module of the file format
alone (numpy and gguf, nothing else of the package). The messages of each
damage are checked in tests/nn/test_gguf.py and tests/text/test_text_gguf.py;
SmolLM2's own file in tests/text/test_text_gguf.py and tests/nn/test_hub.py.
"""

import ast
import pathlib
import sys

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

import netcl_lite.formats.gguf_reader as gguf_reader  # noqa: E402
from llama_files import Tiny, random_weights, write_gguf  # noqa: E402
from netcl_lite.formats.gguf_reader import open_gguf  # noqa: E402
from netcl_lite.nn import DecoderLM  # noqa: E402
from netcl_lite.text import BPETokenizer  # noqa: E402

CFG = Tiny()
IDS = np.array([[3, 17, 5, 60, 2, 9]], np.int32)


@pytest.fixture
def tiny(tmp_path):
    tokens = ([f"t{i}" for i in range(CFG.V)], [1] * CFG.V)
    write_gguf(tmp_path / "m.gguf", CFG, random_weights(CFG), "Q4_1",
               tokens=tokens)
    return tmp_path / "m.gguf"


def test_it_reads_what_gguf_reads(tiny):
    plain, ours = gguf.GGUFReader(tiny), open_gguf(tiny)
    assert type(ours.data) is np.ndarray            # not a np.memmap
    assert list(plain.fields) == list(ours.fields)
    for key, field in plain.fields.items():
        assert field.types == ours.fields[key].types, key
        assert field.contents() == ours.fields[key].contents(), key
    assert len(plain.tensors) == len(ours.tensors) == 2 + 9 * CFG.layers
    for a, b in zip(plain.tensors, ours.tensors):
        assert (a.name, a.tensor_type, a.data_offset) == (
            b.name, b.tensor_type, b.data_offset)
        assert a.data.shape == b.data.shape and (a.data == b.data).all()


def test_the_model_reads_an_open_reader(tiny, queue):
    """Ours or gguf's own: the same logits as from the path."""
    want = DecoderLM.from_gguf(tiny, queue)(IDS).value.to_host()
    for reader in (open_gguf(tiny), gguf.GGUFReader(tiny)):
        model = DecoderLM.from_gguf(reader, queue)
        assert model.stop_ids == (2,)
        np.testing.assert_array_equal(model(IDS).value.to_host(), want)


def test_a_damaged_file_reads_the_same_from_either_side(tiny, queue):
    """The model's and the tokenizer's refusals are one message, naming
    the part that did not parse."""
    data = tiny.read_bytes()
    field = gguf.GGUFReader(tiny).fields["tokenizer.ggml.tokens"]
    last = max(gguf.GGUFReader(tiny).tensors, key=lambda t: t.data_offset)
    cases = {b"GGML" + data[4:]: r"the header is damaged \(GGUF magic invalid\)",
             data[:field.offset + 40]: "the metadata is damaged .*file ends at",
             data[:last.data_offset + 3]:
                 rf"the data of tensor '{last.name}' is damaged"}
    for damaged, message in cases.items():
        tiny.write_bytes(damaged)
        for read in (BPETokenizer.from_gguf, DecoderLM.from_gguf):
            with pytest.raises(ValueError, match=message) as err:
                read(tiny)
            assert str(err.value).startswith(
                f"{tiny}: not a readable GGUF file: the ")


def test_a_missing_file_is_the_error_of_opening_it(tmp_path):
    with pytest.raises(FileNotFoundError):
        open_gguf(tmp_path / "absent.gguf")


def test_the_module_imports_the_format_alone():
    """Both nn and text import it, so it imports neither (nor anything else
    of the package): the standard library, numpy and gguf only."""
    path = pathlib.Path(gguf_reader.__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import"
            names.add(node.module.split(".")[0])
    assert names - set(sys.stdlib_module_names) == {"numpy", "gguf"}
