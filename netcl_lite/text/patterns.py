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
