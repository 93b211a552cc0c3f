"""The regex split patterns of GPT-2 and GPT-4 (chapter 1, "Byte-Pair Encoding").

Before BPE sees any bytes, the text is cut into chunks with one of these
patterns, and merges never cross a chunk boundary. That keeps words, numbers,
punctuation and whitespace apart, so " dog" and "dog." do not share a token
with the full stop. The strings are tiktoken's, character for character.

    >>> import regex
    >>> regex.findall(GPT2_SPLIT_PATTERN, "Hello world's 2024!!")
    ['Hello', ' world', "'s", ' 2024', '!!']
    >>> regex.findall(GPT4_SPLIT_PATTERN, "Hello world's 2024!!")
    ['Hello', ' world', "'s", ' ', '202', '4', '!!']

They need the `regex` package: `\\p{L}` (any letter) and the possessive
quantifiers `++` / `?+`, which also stop catastrophic backtracking on inputs
such as "^" * 1_000_000.

Most English text and most code are pure ASCII. There `\\p{L}` is just
`[A-Za-z]` and `\\p{N}` is `[0-9]`, so Python's built-in `re` can do the
split, and it does it about 2.5x faster than `regex`. `ASCII_TWINS` maps each
pattern to such a twin; the tokenizer uses the twin only when
`text.isascii()`. tests/text/test_text_patterns.py checks that a twin cuts
every ASCII text exactly like its original:

    >>> import re
    >>> re.findall(ASCII_TWINS[GPT2_SPLIT_PATTERN], "Hello world's 2024!!")
    ['Hello', ' world', "'s", ' 2024', '!!']
"""

# tiktoken's r50k_base / gpt2 pattern
GPT2_SPLIT_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++"""
    r"""|\s++$|\s+(?!\S)|\s"""
)

# tiktoken's cl100k_base pattern (GPT-3.5 / GPT-4): case-insensitive contractions,
# numbers in groups of at most three digits, newlines kept with punctuation
GPT4_SPLIT_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
    r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

# tiktoken's o200k_base pattern (GPT-4o): words keep a leading capital run and
# a trailing contraction, numbers in groups of at most three digits
O200K_SPLIT_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*"""
    r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"""
    r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

# The same cuts on ASCII text, for Python's `re` with re.ASCII (so `\s` is
# [ \t\n\r\f\v], exactly what `regex` counts as whitespace among ASCII).
# No possessive quantifiers (Python 3.10 lacks them): here backtracking cannot
# change a match, because each class ends where a different class begins.
_OTHER = r"[^\sA-Za-z0-9]"  # \p{L} and \p{N} are [A-Za-z] and [0-9] in ASCII
ASCII_TWINS = {
    # GPT-2's alternatives, unrolled so that each one starts with a single
    # character or class: `re` then rules most of them out with one look.
    # Order matters only among alternatives that can start with the same
    # character; there the original order is kept.
    GPT2_SPLIT_PATTERN: "|".join([
        r" [A-Za-z]+", r"[A-Za-z]+",  # ' ?\p{L}++', most chunks
        r"[^\sA-Za-z0-9']" + _OTHER + "*",  # punctuation not starting with '
        r"'(?:[sdmt]|ll|ve|re)",  # a contraction beats...
        r"'" + _OTHER + "*",  # ...punctuation that starts with '
        r"\n(?=\S)",  # a newline before text: what `\s` below would match
        r"[0-9]+", r" [0-9]+", " " + _OTHER + "+",
        r"\s+$", r"\s+(?!\S)", r"\s",
    ]),
    # GPT-4's, translated one for one
    GPT4_SPLIT_PATTERN: (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]{1,3}"""
        r"""| ?[^\sA-Za-z0-9]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
}

# ---- which patterns a tokenizer accepts ---------------------------------------
# The two patterns above are known to run in linear time (possessive
# quantifiers, no nested repetition). Any other pattern is "custom": it may be
# at most MAX_PATTERN_CHARS long and nest groups at most MAX_PATTERN_DEPTH
# deep, and every split with it runs under the `regex` module's timeout
# (split.py), so that a pattern such as "(?:a|a)*c|." cannot hang an encode.
KNOWN_PATTERNS = {"gpt2": GPT2_SPLIT_PATTERN, "gpt4": GPT4_SPLIT_PATTERN}
MAX_PATTERN_CHARS = 10_000
MAX_PATTERN_DEPTH = 100


def check_pattern(pattern):
    """A usable split pattern, or a ValueError that says why not.

    >>> check_pattern(GPT2_SPLIT_PATTERN) == GPT2_SPLIT_PATTERN
    True
    >>> check_pattern("(" * 200 + "a" + ")" * 200)
    Traceback (most recent call last):
    ...
    ValueError: the split pattern nests groups 200 deep (at most 100)
    """
    import regex

    if not isinstance(pattern, str):
        raise ValueError(f"a split pattern is a str, got {type(pattern).__name__}")
    if pattern in KNOWN_PATTERNS.values():
        return pattern
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(
            f"the split pattern has {len(pattern)} characters "
            f"(at most {MAX_PATTERN_CHARS})"
        )
    depth = deepest = 0
    escaped = False
    for char in pattern:  # a rough count: "(" inside [...] counts too
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth -= 1
    if deepest > MAX_PATTERN_DEPTH:
        raise ValueError(
            f"the split pattern nests groups {deepest} deep "
            f"(at most {MAX_PATTERN_DEPTH})"
        )
    try:
        regex.compile(pattern)
    except (regex.error, RecursionError, OverflowError) as e:
        raise ValueError(f"the pattern does not compile: {e}") from None
    return pattern
