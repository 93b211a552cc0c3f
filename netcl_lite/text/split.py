"""Cutting text into chunks, fast: `regex` where needed, `re` where it can.

A split pattern needs `regex` for `\\p{L}` (any letter). On pure ASCII text
Python's built-in `re` does the same cut with an ASCII twin of the pattern
(patterns.ASCII_TWINS) about 2.5x faster. That matters: with `regex` alone,
the split took three quarters of a repeated encode of Shakespeare.
`Splitter(pattern)` is a callable that always gives
`regex.findall(pattern, text)`, using the twin wherever it can:

    >>> from netcl_lite.text.patterns import GPT2_SPLIT_PATTERN
    >>> split = Splitter(GPT2_SPLIT_PATTERN)
    >>> split("Hello world's 2024!!")
    ['Hello', ' world', "'s", ' 2024', '!!']
    >>> split("a naïve café")
    ['a', ' naïve', ' café']

Text that is mostly ASCII is cut into stretches at sure chunk boundaries:
the stretches around non-ASCII characters go to `regex`, the rest to `re`.
A sure boundary is a visible ASCII character followed by a space ("x| y"):
no chunk of either GPT pattern contains that pair, and the patterns never
look behind, so the text on each side splits as if it stood alone.

A custom pattern (not one of patterns.KNOWN_PATTERNS) may backtrack
catastrophically, so it runs under `regex`'s timeout: one second plus a
microsecond per character; past that the split raises a ValueError.
"""

import re

import regex

from .patterns import ASCII_TWINS, KNOWN_PATTERNS

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
SURROGATE = re.compile("[\ud800-\udfff]")
_CUT = regex.compile(r"[!-~](?= )")  # a sure boundary at .end()
_LAST_CUT = regex.compile(r"(?r)[!-~](?= )")  # the same, searching backwards
_STRETCH = 1000  # characters after a non-ASCII one that also go to `regex`
TIMEOUT_BASE, TIMEOUT_PER_CHAR = 1.0, 1e-6  # seconds, for custom patterns


class Splitter:
    """Splitter(pattern)(text) == regex.findall(pattern, text), only faster.

    A class rather than a closure, so that a tokenizer holding one can be
    pickled (multiprocessing does that).
    """

    def __init__(self, pattern):
        self._pattern = pattern
        self._findall = regex.compile(pattern).findall
        self._custom = pattern not in KNOWN_PATTERNS.values()
        twin = ASCII_TWINS.get(pattern)  # None for a custom pattern
        self._fast = None if twin is None else re.compile(twin, re.ASCII).findall

    def _slow(self, text):
        if not self._custom:
            return self._findall(text)
        limit = TIMEOUT_BASE + TIMEOUT_PER_CHAR * len(text)
        try:
            return self._findall(text, timeout=limit)
        except TimeoutError:
            raise ValueError(
                f"the custom split pattern {self._pattern[:60]!r} took more "
                f"than {limit:.1f} s on a text of {len(text)} characters "
                "(catastrophic backtracking?); use a known pattern"
            ) from None

    def __call__(self, text):
        if self._fast is None:
            return self._slow(text)
        if text.isascii():  # O(1): Python strings carry an ASCII flag
            return self._fast(text)
        return self._split_mixed(text)

    def _split_mixed(self, text):
        chunks = []
        start, end = 0, len(text)  # text[:start] is done; start is a boundary
        while start < end:
            found = _NON_ASCII.search(text, start)
            if found is None:
                chunks += self._fast(text[start:])
                break
            # the ASCII text before it, up to the last sure boundary
            cut = _LAST_CUT.search(text, start, found.start())
            if cut is not None:
                chunks += self._fast(text[start:cut.end()])
                start = cut.end()
            # regex from there to the first sure boundary _STRETCH chars on
            cut = _CUT.search(text, min(found.end() + _STRETCH, end))
            stop = end if cut is None else cut.end()
            chunks += self._slow(text[start:stop])
            start = stop
        return chunks


def lone_surrogate_error(text, where="text"):
    """The error for text that UTF-8 cannot encode, naming the first culprit."""
    for i, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            return ValueError(
                f"{where}[{i}] is a lone surrogate {char!r} (U+{ord(char):04X}), which "
                "has no UTF-8 bytes; replace or remove it before encoding"
            )
    return ValueError("text cannot be encoded as UTF-8")
