"""The chunk cache: each distinct chunk is merged once (chapter 1).

Text repeats its words, so most chunks of a long text were seen before. The
tokenizer keeps chunk -> ids in a dict and merges only the chunks it does
not know yet. `ChunkCache` is that dict, with one addition: looking up a
chunk it lacks merges the chunk, stores the result and returns it, in the
dict's own `__missing__` hook. So one pass of `map(cache.__getitem__,
chunks)` both finds the known chunks (in C) and fills in the new ones (one
Python call per distinct new chunk), with no second pass to find them:

    >>> calls = []
    >>> cache = ChunkCache(lambda chunk: calls.append(chunk) or [len(chunk)])
    >>> packed = list(map(cache.__getitem__, ["ab", "c", "ab", "ab"]))
    >>> calls  # "ab" was merged once
    ['ab', 'c']
    >>> unpack(b"".join(packed))
    [2, 1, 2, 2]

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
    """chunk -> packed ids; a missing chunk is merged by `encode_chunk(chunk)`.

    `join(chunks)` looks up many chunks and joins their ids. Given
    `encode_chunks` (chunks -> their packed ids), it merges the new chunks
    together, in one call, instead of one call per chunk:

    >>> calls = []
    >>> def encode_chunks(chunks):
    ...     calls.append(chunks)
    ...     return [pack([len(chunk)]) for chunk in chunks]
    >>> cache = ChunkCache(None, encode_chunks)
    >>> unpack(cache.join(["ab", "c", "ab"])), calls
    ([2, 1, 2], [['ab', 'c']])

    A class rather than a closure, so that a tokenizer holding one can be
    pickled (multiprocessing does that).
    """

    def __init__(self, encode_chunk, encode_chunks=None):
        super().__init__()
        self.encode_chunk = encode_chunk  # chunk -> list of ids
        self.encode_chunks = encode_chunks  # [chunk, ...] -> [packed ids, ...]
        self._new = None  # during `join`: the new chunks, merged at its end

    def join(self, chunks):
        """b"".join of the chunks' packed ids, merging the new ones."""
        if self.encode_chunks is None:
            return b"".join(map(self.__getitem__, chunks))
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
        if self._new is not None:  # in `join`: note it, merge it at the end
            self._new.append(chunk)
            placeholder = self[chunk] = bytearray()
            return placeholder
        packed = self[chunk] = pack(self.encode_chunk(chunk))
        return packed
