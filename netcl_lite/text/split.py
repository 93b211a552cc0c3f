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
the stretches around non-ASCII characters go to `regex` (one stretch for as
long as they come closer than `_STRETCH` to each other), the rest to `re`.
A sure boundary is a visible ASCII character followed by a space ("x| y"):
no chunk of either GPT pattern contains that pair, and the patterns never
look behind, so the text on each side splits as if it stood alone.

A custom pattern (not one of patterns.KNOWN_PATTERNS) may backtrack
catastrophically, so it runs under `regex`'s timeout: one second plus a
microsecond per character; past that the split raises a ValueError.

A custom pattern need not match every character. The text between two
matches then becomes a chunk of its own, as in Hugging Face's
`Split(behavior="Isolated")`, so no character is lost, and a chunk is always
a whole match, even where the pattern has capturing groups:

    >>> Splitter(r"\\d+")("ab12cd")
    ['ab', '12', 'cd']
"""

import functools
import re

import regex

from .patterns import ASCII_TWINS, KNOWN_PATTERNS

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
SURROGATE = re.compile("[\ud800-\udfff]")
_CUT = regex.compile(r"[!-~](?= )")  # a sure boundary at .end()
_LAST_CUT = regex.compile(r"(?r)[!-~](?= )")  # the same, searching backwards
_STRETCH = 128  # ASCII between two non-ASCII characters, below which `regex` takes it
TIMEOUT_BASE, TIMEOUT_PER_CHAR = 1.0, 1e-6  # seconds, for custom patterns


class Splitter:
    """Splitter(pattern)(text) == regex.findall(pattern, text), only faster.

    A class rather than a closure, so that a tokenizer holding one can be
    pickled (multiprocessing does that).
    """

    def __init__(self, pattern):
        self._pattern = pattern
        compiled = regex.compile(pattern)
        self._findall = compiled.findall
        self._finditer = compiled.finditer
        self._custom = pattern not in KNOWN_PATTERNS.values()
        self._groups = compiled.groups  # findall would return groups, not matches
        twin = ASCII_TWINS.get(pattern)  # None for a custom pattern
        self._fast = None if twin is None else re.compile(twin, re.ASCII).findall

    def _slow(self, text):
        if not self._custom:
            return self._findall(text)
        limit = TIMEOUT_BASE + TIMEOUT_PER_CHAR * len(text)
        try:
            if not self._groups:
                chunks = self._findall(text, timeout=limit)
                if sum(map(len, chunks)) == len(text):  # matches cover the text
                    return chunks
            return self._matches_and_gaps(text, limit)
        except TimeoutError:
            raise ValueError(
                f"the custom split pattern {self._pattern[:60]!r} took more "
                f"than {limit:.1f} s on a text of {len(text)} characters "
                "(catastrophic backtracking?); use a known pattern"
            ) from None

    def _matches_and_gaps(self, text, limit):
        """Every match, and every stretch between two matches, in order."""
        chunks, end = [], 0
        for match in self._finditer(text, timeout=limit):
            start = match.start()
            if start > end:
                chunks.append(text[end:start])
            if match.end() > start:
                chunks.append(match.group())
            end = match.end()
        if end < len(text):
            chunks.append(text[end:])
        return chunks

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
            # regex from there on, while non-ASCII characters come closer than
            # _STRETCH to each other, then to the next sure boundary (none
            # found: less than _STRETCH ASCII is left, regex takes it too)
            last = _dense_end(_STRETCH).search(text, found.start())
            cut = None if last is None else _CUT.search(text, last.end())
            stop = end if cut is None else cut.end()
            chunks += self._slow(text[start:stop])
            start = stop
        return chunks


@functools.lru_cache(maxsize=None)
def _dense_end(stretch):
    """A pattern that finds a non-ASCII character followed by `stretch` ASCII
    ones: where a run of dense non-ASCII text ends."""
    return re.compile(rf"[^\x00-\x7f](?=[\x00-\x7f]{{{stretch}}})")


def lone_surrogate_error(text, where="text"):
    """The error for text that UTF-8 cannot encode, naming the first culprit."""
    for i, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            return ValueError(
                f"{where}[{i}] is a lone surrogate {char!r} (U+{ord(char):04X}), which "
                "has no UTF-8 bytes; replace or remove it before encoding"
            )
    return ValueError("text cannot be encoded as UTF-8")
