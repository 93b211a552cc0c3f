"""The textbook merge step, kept apart from netcl_lite.text so that the
reference trainer and encoder in the tests cannot share a bug with it."""


def reference_merge(ids, pair, new_id):
    """Replace each occurrence of `pair`, left to right, by `new_id`."""
    out, i = [], 0
    while i < len(ids):
        if tuple(ids[i:i + 2]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
