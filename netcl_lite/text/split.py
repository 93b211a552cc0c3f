"""Cutting text into chunks, fast: with `re`, and `regex` only where needed.

A split pattern needs `regex` for `\\p{L}` (any letter). Python's built-in
`re` cuts the same text 2x to 2.8x faster, given a twin of the
pattern in which `\\p{L}`, `\\p{N}` and `\\s` are spelled out as character
ranges (patterns.twin). The ranges here are every letter, digit and space
below U+10000, read from `regex`'s own tables, so the two engines agree on
every such character. `Splitter(pattern)` is a callable that always gives
`regex.findall(pattern, text)`, using the twin wherever it can:

    >>> from netcl_lite.text.patterns import GPT2_SPLIT_PATTERN
    >>> split = Splitter(GPT2_SPLIT_PATTERN)
    >>> split("Hello world's 2024!!")
    ['Hello', ' world', "'s", ' 2024', '!!']
    >>> split("a naïve café 🙂")
    ['a', ' naïve', ' café', ' 🙂']

Why stop at U+10000? `re` checks a class of characters below U+10000 with
one table lookup, but one that reaches beyond walks a list of ranges, and
the split got 7x to 11x slower. Above U+10000 most characters are emoji,
which are neither letters, digits nor spaces, and the twin treats every
character up there that way. A text that holds a letter or digit beyond
U+10000 (𝐀, 𠀀, 𝟎) is cut into stretches at sure chunk boundaries: the
stretches around such characters go to `regex` (one stretch for as long as
they come closer than `_STRETCH` to each other), the rest to `re`. A sure
boundary is a visible ASCII character followed by a space ("x| y"): no
chunk of either GPT pattern contains that pair, and the patterns never look
behind, so the text on each side splits as if it stood alone.

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

from .patterns import KNOWN_PATTERNS, twin

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # beyond the twin's tables
_LETTER_OR_DIGIT = regex.compile(r"[\p{L}\p{N}]")
SURROGATE = re.compile("[\ud800-\udfff]")
_CUT = regex.compile(r"[!-~](?= )")  # a sure boundary at .end()
_LAST_CUT = regex.compile(r"(?r)[!-~](?= )")  # the same, searching backwards
_STRETCH = 128  # characters between two astral ones, below which `regex` takes them
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
        self._fast = None if self._custom else _compiled_twin(pattern).findall

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
        if text.isascii() or not _astral_letters(text):  # isascii is O(1)
            return self._fast(text)
        return self._split_mixed(text)

    def _split_mixed(self, text):
        chunks = []
        start, end = 0, len(text)  # text[:start] is done; start is a boundary
        while start < end:
            found = _ASTRAL.search(text, start)
            if found is None:
                chunks += self._fast(text[start:])
                break
            # the text before it, up to the last sure boundary
            cut = _LAST_CUT.search(text, start, found.start())
            if cut is not None:
                chunks += self._fast(text[start:cut.end()])
                start = cut.end()
            # regex from there on, while astral characters come closer than
            # _STRETCH to each other, then to the next sure boundary (none
            # found: less than _STRETCH characters are left, regex takes them)
            last = _dense_end(_STRETCH).search(text, found.start())
            cut = None if last is None else _CUT.search(text, last.end())
            stop = end if cut is None else cut.end()
            chunks += self._slow(text[start:stop])
            start = stop
        return chunks


@functools.lru_cache(maxsize=None)
def _dense_end(stretch):
    """A pattern that finds an astral character followed by `stretch` others:
    where a run of dense astral text ends."""
    astral = "\U00010000-\U0010ffff"
    return re.compile(f"[{astral}](?=[^{astral}]{{{stretch}}})")


def _astral_letters(text):
    """Whether `text` holds a letter or digit beyond U+10000 (not emoji)."""
    return any(map(_LETTER_OR_DIGIT.match, _ASTRAL.findall(text)))


@functools.lru_cache(maxsize=None)
def _compiled_twin(pattern):
    """The pattern's twin for `re`, with every letter, digit and space below
    U+10000, compiled once per process."""
    return re.compile(twin(pattern, *_bmp_classes()))


@functools.lru_cache(maxsize=None)
def _bmp_classes():
    """`regex`'s \\p{L}, \\p{N} and \\s below U+10000, as bodies of [...] for
    `re`: runs of code points found by `regex` itself, so both engines agree.

    >>> letters, digits, spaces = _bmp_classes()
    >>> digits[:6]  # 0-9, then superscripts two and three
    '0-9²-³'
    """
    below = "".join(map(chr, [*range(0xD800), *range(0xE000, 0x10000)]))
    return tuple("".join(_as_range(run.group())
                         for run in regex.finditer(f"{cls}+", below))
                 for cls in (r"\p{L}", r"\p{N}", r"\s"))


def _as_range(run):
    """Consecutive code points "abc" -> the class piece "a-c"."""
    first, last = re.escape(run[0]), re.escape(run[-1])
    return first if len(run) == 1 else f"{first}-{last}"


def lone_surrogate_error(text, where="text"):
    """The error for text that UTF-8 cannot encode, naming the first culprit."""
    for i, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            return ValueError(
                f"{where}[{i}] is a lone surrogate {char!r} (U+{ord(char):04X}), which "
                "has no UTF-8 bytes; replace or remove it before encoding"
            )
    return ValueError("text cannot be encoded as UTF-8")
