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

Python's built-in `re` has no `\\p{L}`, but it cuts text 2x to 2.8x
faster than `regex` (measured on Shakespeare and on mixed text). `twin`
writes each pattern for `re`, with the classes spelled out as ranges of
characters. In ASCII text `\\p{L}` is just `[A-Za-z]` and `\\p{N}` is
`[0-9]`; that is `ASCII_TWINS`, the easiest twin to read. The tokenizer's
splitter (split.py) fills in every letter, digit and space below U+10000
instead. tests/text/test_text_patterns.py checks that the ASCII twin cuts
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

# Two more splits that real models' files name (tokenizer.ggml.pre in a GGUF
# file). SmolLM's cuts every digit off alone, then cuts the rest with GPT-2's
# pattern; as one pattern, a digit is a chunk of its own, and a run of
# whitespace just before a digit is cut as if the text ended there (GPT-2's
# `\s++$`), so "a  1" gives "a", "  ", "1". Hugging Face spells it
# Sequence[Digits(individual_digits=True), ByteLevel]; tests/text checks the
# two cut alike.
SMOLLM_SPLIT_PATTERN = (
    r"""\p{N}|'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?[^\s\p{L}\p{N}]++"""
    r"""|\s++(?:$|(?=\p{N}))|\s+(?!\S)|\s"""
)

# Llama 3's pattern, as Meta's tokenizer and its tokenizer.json spell it:
# cl100k's idea, but whitespace before a newline goes with all the newlines
# that follow (`\s*[\r\n]+`), and contractions are case-insensitive as a group
LLAMA3_SPLIT_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# The same cuts for Python's `re`, which has no \p{L}: each pattern written
# with its three classes spelled out as character ranges. `twin(pattern,
# letters, digits, spaces)` fills them in; with [A-Za-z], [0-9] and ASCII's
# whitespace it is the ASCII twin, and split.py fills in every letter, digit
# and space below U+10000 from `regex`'s own tables.
# No possessive quantifiers (Python 3.10 lacks them): here backtracking cannot
# change a match, because each class ends where a different class begins.
ASCII_CLASSES = ("A-Za-z", "0-9", r" \t\n\r\x0b\x0c")  # \p{L}, \p{N}, \s


def twin(pattern, letters, digits, spaces):
    """GPT-2's or GPT-4's pattern for `re`, with \\p{L}, \\p{N} and \\s
    the classes [letters], [digits] and [spaces] (bodies of [...]).

    >>> import re
    >>> re.findall(twin(GPT2_SPLIT_PATTERN, *ASCII_CLASSES), "Hi you's 42!!")
    ['Hi', ' you', "'s", ' 42', '!!']
    """
    L, N, S = letters, digits, spaces
    other = f"[^{S}{L}{N}]"  # neither space, letter nor digit
    if pattern == GPT2_SPLIT_PATTERN:
        # unrolled, so that each alternative starts with a single character
        # or class: `re` then rules most of them out with one look. Order
        # matters only among alternatives that can start with the same
        # character; there the original order is kept.
        return "|".join([
            f" [{L}]+", f"[{L}]+",  # ' ?\p{L}++', most chunks
            f"[^{S}{L}{N}']{other}*",  # punctuation not starting with '
            r"'(?:[sdmt]|ll|ve|re)",  # a contraction beats...
            f"'{other}*",  # ...punctuation that starts with '
            rf"\n(?=[^{S}])",  # a newline before text: what \s below would match
            f"[{N}]+", f" [{N}]+", f" {other}+",
            f"[{S}]+$", f"[{S}]+(?![^{S}])", f"[{S}]",
        ])
    if pattern == GPT4_SPLIT_PATTERN:  # translated one for one
        return (rf"'(?i:[sdmt]|ll|ve|re)|[^\r\n{L}{N}]?[{L}]+|[{N}]{{1,3}}"
                rf"| ?{other}+[\r\n]*|[{S}]+$|[{S}]*[\r\n]|[{S}]+(?![^{S}])"
                f"|[{S}]")
    raise ValueError("only GPT-2's and GPT-4's patterns have a twin")


ASCII_TWINS = {pattern: twin(pattern, *ASCII_CLASSES)
               for pattern in (GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN)}

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
