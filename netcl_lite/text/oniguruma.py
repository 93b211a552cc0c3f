"""Split patterns in the dialect of `tokenizers`' regex engine, Oniguruma.

Hugging Face `tokenizers` compiles a `Split` pattern with Oniguruma (Ruby
syntax); this library uses the `regex` package. The two agree on almost
everything the GPT patterns use (`\\p{L}`, Unicode `\\s`, `++`, `?+`, `(?i:)`),
and differ on three things, which these functions translate:

| pattern | `regex` | Oniguruma |
|---|---|---|
| `X{1,3}+` | possessive: at most 3 | `(?:X{1,3})+`: any number |
| `$` | end of text, or before a final newline | end of any line |
| `^` | start of text | start of any line |

so `to_oniguruma` writes `(?>X{1,3})` (an atomic group), `\\Z` and `\\A`,
and `to_regex` reads them back:

    >>> to_oniguruma(r"\\p{N}{1,3}+|\\s++$")
    '(?>\\\\p{N}{1,3})|\\\\s++\\\\Z'
    >>> to_regex(r"\\p{N}{1,3}+|\\s+$")
    '(?:\\\\p{N}{1,3})+|\\\\s+(?m:$)'

Inline flags other than `i` mean different things to the two (`(?m)` is
"dot matches newline" in Ruby), so both functions refuse them with a
ValueError, as they refuse a pattern they cannot scan.
"""

import re

_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}")
_GROUP_START = re.compile(r"\((?:\?(?:[:=!>|]|<[=!]|<[A-Za-z_]\w*>|P<[A-Za-z_]\w*>|"
                          r"([A-Za-z-]*)[:)]))?")


def to_oniguruma(pattern):
    """A `regex` pattern -> the same cut in Oniguruma's dialect."""
    return _translate(pattern, "oniguruma")


def to_regex(pattern):
    """An Oniguruma pattern (from a tokenizer.json) -> the same cut for `regex`."""
    return _translate(pattern, "regex")


def _translate(pattern, target):
    anchors = ({"^": r"\A", "$": r"\Z", r"\Z": r"\z"} if target == "oniguruma"
               else {"^": "(?m:^)", "$": "(?m:$)", r"\Z": "$", r"\z": r"\Z"})
    out = []  # pieces of the translated pattern
    atom = None  # index in `out` where the last atom (what a quantifier repeats) starts
    groups = []  # indices in `out` where the open groups start
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            end = _escape_end(pattern, i)
            piece = pattern[i:end]
            if piece in anchors:
                out.append(anchors[piece])
                atom = None
            else:
                atom = len(out)
                out.append(piece)
            i = end
        elif char == "[":
            end = _class_end(pattern, i)
            atom = len(out)
            out.append(pattern[i:end])
            i = end
        elif char == "(":
            start = _GROUP_START.match(pattern, i)
            prefix, flags = start.group(), start.group(1)
            if prefix == "(" and pattern.startswith("(?", i):
                raise ValueError(f"the split pattern has a group {pattern[i:i + 4]!r}"
                                 "... that this translation does not know")
            if flags and set(flags) - set("i-"):
                raise ValueError(f"the split pattern sets the inline flags "
                                 f"{flags!r}, which regex and Oniguruma read "
                                 "differently (only i is the same)")
            if prefix.endswith(")"):  # (?i) alone: a flag, no group
                out.append(prefix)
            else:
                groups.append(len(out))
                out.append(prefix)
            atom = None
            i += len(prefix)
        elif char == ")":
            if not groups:
                raise ValueError("the split pattern has an unbalanced ')'")
            atom = groups.pop()
            out.append(")")
            i += 1
        elif char == "{" and _INTERVAL.match(pattern, i):
            end = _INTERVAL.match(pattern, i).end()
            interval = pattern[i:end]
            if end < n and pattern[end] == "+":  # the case the dialects split on
                if atom is None:
                    raise ValueError(f"the split pattern repeats nothing with "
                                     f"{interval}+ at {i}")
                body = "".join(out[atom:]) + interval
                del out[atom:]
                out.append(f"(?>{body})" if target == "oniguruma"
                           else f"(?:{body})+")
                i = end + 1
            else:
                out.append(interval)
                i = end
        elif char in "^$":
            out.append(anchors[char])
            atom = None
            i += 1
        else:
            if char == "|":
                atom = None
            elif char not in "*+?":  # a quantifier keeps the atom it repeats
                atom = len(out)
            out.append(char)
            i += 1
    if groups:
        raise ValueError("the split pattern has an unclosed '('")
    return "".join(out)


def _escape_end(pattern, i):
    """The end of the escape at pattern[i] == "\\": \\n, \\p{L}, \\x{263A}, ..."""
    if i + 1 >= len(pattern):
        raise ValueError("the split pattern ends with a lone backslash")
    end = i + 2
    if pattern[i + 1] in "pPxNu" and end < len(pattern) and pattern[end] == "{":
        close = pattern.find("}", end)
        if close < 0:
            raise ValueError(f"the split pattern has an unclosed escape at {i}")
        end = close + 1
    return end


def _class_end(pattern, i):
    """The end of the character class that starts at pattern[i] == "["."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":  # a leading ] is a literal
        j += 1
    depth = 1
    while j < len(pattern):
        char = pattern[j]
        if char == "\\":
            j = _escape_end(pattern, j)
            continue
        if pattern.startswith("[:", j):  # [:alpha:]
            close = pattern.find(":]", j + 2)
            if close >= 0:
                j = close + 2
                continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError(f"the split pattern has an unclosed '[' at {i}")
