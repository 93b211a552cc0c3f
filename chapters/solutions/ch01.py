"""Reference answers for chapter 01's exercises."""


def exercise_1(ids):
    """get_stats: count adjacent pairs, overlapping ones included."""
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def exercise_2(ids, pair, idx):
    """merge: replace `pair` by `idx`, scanning left to right."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2  # both tokens are used up: occurrences never overlap
        else:
            out.append(ids[i])
            i += 1
    return out


def exercise_3(tokenizer, text):
    """bytes_per_token: UTF-8 bytes, not characters, over tokens."""
    return len(text.encode("utf-8")) / len(tokenizer.encode(text))


def exercise_4(tokenizer, piece):
    """which_merge: find the merged token whose bytes are `piece`."""
    for k, (left, right) in enumerate(tokenizer.merges):
        if tokenizer.decode_bytes([256 + k]) == piece:
            return (k, tokenizer.decode_bytes([left]),
                    tokenizer.decode_bytes([right]))
    raise ValueError(f"{piece!r} is not a merged token of {tokenizer!r}")
