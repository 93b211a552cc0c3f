"""``open_gguf(path)``: a GGUF file, parsed by the ``gguf`` package (chapter 14).

GGUF, llama.cpp's format, is one file in four parts:

    header        "GGUF", the version, how many tensors and metadata keys
    metadata      key -> typed value: the model's config
                  (``llama.block_count``), its tokenizer
                  (``tokenizer.ggml.tokens``), its chat template
    tensor table  each tensor's name, shape, type and where its data starts
    data          the tensors' bytes, each at its offset

The ``gguf`` package, from the llama.cpp project, parses it; this library
has no parser of its own. ``open_gguf`` returns that package's
``GGUFReader``, changed in three ways:

- a damaged file is a ValueError that names the part that did not parse:
  "the header", "the metadata", "the tensor table" or "the data of tensor
  'blk.0.attn_q.weight'" (GGUF has no checksum, so damaged weight bytes
  read as other weights and cannot be caught);
- it never reads past the end of the file. A damaged length would
  otherwise read nothing, silently, as many times as it says;
- it is 3 to 4 times faster. The reader slices its memory map once for every
  value of every key, 250,000 times for SmolLM2's tokenizer; a slice of a
  ``numpy.memmap`` is another memmap, whose set-up runs Python code each
  time. This reader keeps the map as a plain array (the same memory) and
  reads each value through one short method (``_get``).

The model (``nn/gguf_loader.py``) and its tokenizer (``text/gguf_file.py``)
both read through it, and each accepts a reader the other opened, so that
``netcl_lite.nn.pretrained`` parses the file once.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notes.gguf")
>>> with open(path, "wb") as f:
...     _ = f.write(b"GGUF, or so it says")
>>> open_gguf(path)
Traceback (most recent call last):
...
ValueError: .../notes.gguf: not a readable GGUF file: the header is damaged (...)

``gguf`` is an optional package (``pip install 'netcl_lite[models]'``),
imported when a file is read, not when this module is.
"""

import functools
import importlib.util
import re

import numpy as np

INSTALL = "pip install 'netcl_lite[models]' (or pip install 'gguf>=0.17')"
# what gguf raises, in some step, on bytes that are not a GGUF file
DAMAGED = (ValueError, KeyError, IndexError, TypeError, OverflowError,
           MemoryError)


def require_gguf():
    """The ``gguf`` package, or a ModuleNotFoundError saying how to get it."""
    try:
        import gguf  # optional: the models extra
    except ImportError:
        raise ModuleNotFoundError("reading a GGUF file needs the gguf "
                                  f"package: {INSTALL}") from None
    return gguf


def is_reader(source):
    """Whether ``source`` is an open ``gguf.GGUFReader`` (ours or gguf's own)
    rather than a path."""
    if importlib.util.find_spec("gguf") is None:
        return False
    return isinstance(source, require_gguf().GGUFReader)


def source_of(reader):
    """The file an open reader read, for error messages."""
    return str(getattr(reader, "path", None)
               or getattr(reader.data, "filename", None) or "the GGUF file")


def open_gguf(path):
    """``path`` parsed (see the module docstring).

    A file that is not there raises the OSError that opening it raises
    (FileNotFoundError); bytes that do not parse raise a ValueError naming
    the file and the damaged part.
    """
    reader_class = _reader_class()
    reader = reader_class.__new__(reader_class)
    try:
        reader_class.__init__(reader, path)
    except OSError:
        raise
    except DAMAGED as err:
        raise ValueError(f"{path}: not a readable GGUF file: the {reader.part} "
                         f"is damaged ({str(err)[:200]})") from None
    return reader


_ITEMSIZE = {}  # dtype -> bytes per item, looked up once per dtype


@functools.lru_cache(maxsize=None)
def _reader_class():
    """gguf.GGUFReader with the changes of the module docstring (made on
    first use: gguf is imported then)."""
    gguf = require_gguf()

    class Reader(gguf.GGUFReader):
        """The methods below are the reader's own steps (gguf 0.17 to
        0.19): the header, then ``_build_fields``, ``_build_tensor_info``
        and ``_build_tensors``, each reading bytes through ``_get``. Should
        a later gguf rename a step, files still load; only the messages
        lose the part's name (tests/nn/test_gguf.py would say so)."""

        part = "header"  # the part being read, for the error message

        def __init__(self, path):
            self.path = str(path)
            super().__init__(path)

        @property
        def data(self):
            return self._bytes

        @data.setter
        def data(self, mapped):  # GGUFReader.__init__ puts its memmap here
            self._bytes = mapped.view(np.ndarray)  # the same memory, plain

        def _get(self, offset, dtype, count=1, override_order=None):
            """``count`` values of ``dtype`` at byte ``offset``, a view of
            the file in its byte order: gguf's own ``_get``, which also
            checks the end of the file."""
            size = _ITEMSIZE.get(dtype)
            if size is None:
                size = _ITEMSIZE[dtype] = np.dtype(dtype).itemsize
            offset, count = int(offset), int(count)
            end = offset + size * count
            if end > len(self._bytes):
                raise ValueError(f"the file ends at byte {len(self._bytes)}, "
                                 f"reading it needs bytes up to {end}")
            values = self._bytes[offset:end].view(dtype)  # (count,)
            order = override_order or self.byte_order
            return values.view(values.dtype.newbyteorder(order))

        def _build_fields(self, *args):
            self.part = "metadata"
            return super()._build_fields(*args)

        def _build_tensor_info(self, *args):
            self.part = "tensor table"
            return super()._build_tensor_info(*args)

        def _build_tensors(self, start, fields):
            built, seen = [], set()
            for field in fields:  # one at a time, to name it
                self.part = f"data of tensor {field.name!r}"
                if field.name in seen:
                    raise ValueError(f"tensor {field.name!r} appears twice")
                seen.add(field.name)
                super()._build_tensors(start, [field])
                built += self.tensors
            self.tensors = built

    return Reader


# tests/test_docstrings.py runs every docstring; without gguf (an optional
# package) the example is skipped rather than failed
if importlib.util.find_spec("gguf") is None:
    __doc__ = re.sub(r"^(\s*>>> .*)$", r"\1  # doctest: +SKIP", __doc__,
                     flags=re.M)
