"""The chunk cache: each distinct chunk is merged once (chapter 1).

Text repeats its words, so most chunks of a long text were seen before. The
tokenizer keeps chunk -> ids in a dict and merges only the chunks it does
not know yet. `ChunkCache` is that dict, with one addition: `join(chunks)`
looks all the chunks up in one pass of `map(cache.__getitem__, chunks)`,
which finds the known ones in C. A chunk it lacks calls the dict's own
`__missing__` hook (one Python call per distinct new chunk), which notes it
and holds its place with an empty `bytearray`. At the end the new chunks
merge together, in one call of `encode_chunks`, which is where they can
share work (batch.py), and fill their places:

    >>> calls = []
    >>> def encode_chunks(chunks):
    ...     calls.append(chunks)
    ...     return [pack([len(chunk)]) for chunk in chunks]
    >>> cache = ChunkCache(encode_chunks)
    >>> unpack(cache.join(["ab", "c", "ab", "ab"]))
    [2, 1, 2, 2]
    >>> calls  # "ab" was merged once, together with "c"
    [['ab', 'c']]
    >>> unpack(cache.join(["c", "ab"])), len(calls)  # nothing new to merge
    ([1, 2], 1)

The ids are kept packed as bytes (`pack`, 4 per id), so that joining the
ids of many chunks is one `bytes.join` and unpacking them one
`array.tolist` (`unpack`).
"""

from array import array

IDS = "I" if array("I").itemsize >= 4 else "L"  # an unsigned C type of 4+ bytes


def pack(ids):
    """Token ids as bytes, for the chunk cache."""
    return array(IDS, ids).tobytes()


def unpack(packed):
    """Packed bytes back to a list of token ids.

    >>> unpack(pack([7, 70000]))
    [7, 70000]
    """
    return array(IDS, packed).tolist()


class ChunkCache(dict):
    """chunk -> packed ids; `join` merges the new chunks with `encode_chunks`.

    A class rather than a closure, so that a tokenizer holding one can be
    pickled (multiprocessing does that).
    """

    def __init__(self, encode_chunks):
        super().__init__()
        self.encode_chunks = encode_chunks  # [chunk, ...] -> [packed ids, ...]
        self._new = None  # during `join`: the new chunks, merged at its end

    def join(self, chunks):
        """b"".join of the chunks' packed ids, merging the new ones."""
        self._new = new = []
        try:
            # a new chunk's ids are an empty bytearray for now, filled below
            parts = list(map(self.__getitem__, chunks))
            if new:
                packed = self.encode_chunks(new)
                for chunk, ids in zip(new, packed):
                    self[chunk][:] = ids  # fills it where `parts` holds it too
                self.update(zip(new, packed))  # and keep the ids as bytes
        except BaseException:
            for chunk in new:  # nothing half done stays in the cache
                self.pop(chunk, None)
            raise
        finally:
            self._new = None
        return b"".join(parts)

    def __missing__(self, chunk):
        if self._new is None:  # only `join` fills in chunks
            raise KeyError(chunk)
        self._new.append(chunk)
        placeholder = self[chunk] = bytearray()
        return placeholder
