"""Text -> token ids: byte-level BPE, special tokens, chat prompts (chapter 1).

    >>> from netcl_lite.text import BPETokenizer
    >>> tok = BPETokenizer()
    >>> tok.train_from_iterator(["Hello world!", "Attention is all you need."])
    >>> tok.decode(tok.encode("Hello world!"))
    'Hello world!'

Pure Python plus the `regex` package; nothing here touches OpenCL.
"""

from .chat import ChatFormat
from .patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN
from .tokenizer import BPETokenizer

__all__ = ["BPETokenizer", "ChatFormat", "GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN",
           "O200K_SPLIT_PATTERN"]
