"""Special tokens: control strings such as "<|endoftext|>" with ids of their own.

A special token never comes out of BPE: it is matched as a whole string, and
only where the caller allows it. Text that merely looks like one stays
ordinary text, otherwise a user could type "<|eot_id|>" into a chat and end
the turn of the model (prompt injection).

    >>> pieces = split_on_specials("a<|x|>b<|y|>", {"<|x|>"})
    >>> pieces
    ['a', '<|x|>', 'b<|y|>']

Odd positions of the result are the allowed special strings, even positions
are ordinary text (possibly empty).
"""

import regex


def allowed_specials(allowed_special, special_tokens):
    """The set of special strings to match: "all", or a subset of `special_tokens`.

    >>> sorted(allowed_specials("all", {"<|a|>": 5, "<|b|>": 6}))
    ['<|a|>', '<|b|>']
    """
    if isinstance(allowed_special, str):
        if allowed_special != "all":
            raise ValueError(
                f'allowed_special must be "all" or a set of special token '
                f"strings, got the string {allowed_special!r}"
            )
        return set(special_tokens)
    allowed = set(allowed_special)
    unknown = sorted(allowed - set(special_tokens))
    if unknown:
        raise ValueError(f"not registered as special tokens: {unknown}")
    return allowed


def special_splitter(allowed):
    """A compiled ``split(text)`` for one set of allowed special strings.

    Building it sorts and escapes every string; with a thousand special
    tokens that costs milliseconds, so the tokenizer keeps the result.
    """
    if not allowed:
        return lambda text: [text]
    # longest first, so that "<|a|>x" wins over its prefix "<|a|>"
    alternatives = sorted(allowed, key=len, reverse=True)
    pattern = "(" + "|".join(regex.escape(s) for s in alternatives) + ")"
    return regex.compile(pattern).split


def split_on_specials(text, allowed):
    """Cut `text` at each allowed special string; see the module docstring."""
    return special_splitter(allowed)(text)
