"""npm packages for the static course, without node:
``python tools/vendor_js.py`` fetches every pinned package into the cache.

The site's live figures run JavaScript libraries from npm (js-tiktoken for
the tokenizer playground). They are vendored when the site is built, the way
MathJax is: nothing is fetched when a page is viewed.

- A package is one pinned version (``PINS``), fetched as the registry's
  tarball and checked against the sha512 integrity pinned here, so a changed
  file on the registry stops the build instead of reaching readers.
- Tarballs are kept in a cache (``$NETCL_NPM_CACHE``, else
  ``~/.cache/netcl_lite/npm``); a build with every pin cached needs no
  network. The registry is npm's own, or ``$npm_config_registry``.
- Pages opened from ``file://`` cannot import ES modules or fetch files, so
  a package's CommonJS files are joined into one classic ``<script>``
  (``cjs_bundle``): each module becomes a function of ``module``,
  ``exports`` and ``require``, and the entry's exports become a global.

>>> integrity_of(b"abc")[:20]
'sha512-3a81oZNherrMQ'
>>> script = cjs_bundle({"a": "exports.two = require('b').one + 1;",
...                      "b": "module.exports = {one: 1};"}, "a", "demo")
>>> script.startswith("(function () {") and "window.demo = " in script
True
"""

import base64
import hashlib
import io
import json
import os
import pathlib
import sys
import tarfile
import urllib.request

# name -> (version, the registry's "dist.integrity" of that version's tarball)
PINS = {
    "js-tiktoken": ("1.0.21", "sha512-biOj/6M5qdgx5TKjDnFT1ymSpM5tbd3ylwDtrQvFQ"
                              "Su0Z7bBYko2dF+W/aUkXUPuk6IVpRxk/3Q2sHOzGlS36g=="),
    "base64-js": ("1.5.1", "sha512-AKpaYlHn8t4SVbOHCy+b5+KKgvR4vrsD8vbvrbiQJps7"
                           "fKDTkjkDry6ji0rUJjC0kzbNePLwzxq8iypo41qeWA=="),
}
DEFAULT_REGISTRY = "https://registry.npmjs.org/"
# js-tiktoken's vocabularies (dist/ranks/NAME.cjs) that the course offers
TIKTOKEN_RANKS = ("gpt2", "cl100k_base", "o200k_base")


class VendorError(RuntimeError):
    """A package could not be had: not cached and not fetched, or a tarball
    whose integrity does not match its pin."""


def cache_dir():
    given = os.environ.get("NETCL_NPM_CACHE")
    return pathlib.Path(given) if given else (
        pathlib.Path.home() / ".cache" / "netcl_lite" / "npm")


def registry():
    return (os.environ.get("npm_config_registry")
            or os.environ.get("NPM_CONFIG_REGISTRY") or DEFAULT_REGISTRY)


def integrity_of(data):
    """npm's Subresource Integrity string of some bytes (sha512, base64)."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def tarball_url(name, version):
    base = name.rsplit("/", 1)[-1]  # "@scope/pkg" -> "pkg-1.0.0.tgz"
    return f"{registry().rstrip('/')}/{name}/-/{base}-{version}.tgz"


def tarball(name):
    """The bytes of the pinned tarball of ``name``, from the cache or fetched
    (then cached), checked against its pinned integrity."""
    if name not in PINS:
        raise VendorError(f"{name!r} is not pinned in tools/vendor_js.py PINS "
                          f"(pinned: {sorted(PINS)})")
    version, integrity = PINS[name]
    path = cache_dir() / f"{name.replace('/', '+')}-{version}.tgz"
    if path.is_file():
        data = path.read_bytes()
        if integrity_of(data) == integrity:
            return data
        path.unlink()  # a damaged or foreign file: fetch it again
    url = tarball_url(name, version)
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read()
    except OSError as err:
        raise VendorError(
            f"cannot fetch {name} {version} from {url} ({err}), and it is not "
            f"in the cache {cache_dir()}: run `python tools/vendor_js.py` once "
            "with the npm registry reachable") from None
    if integrity_of(data) != integrity:
        raise VendorError(f"{name} {version}: the tarball from {url} has "
                          f"integrity {integrity_of(data)}, pinned {integrity}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(path)
    return data


def read(name, member):
    """One file of a pinned package, by its path inside the package
    ("dist/lite.cjs"), as text."""
    with tarfile.open(fileobj=io.BytesIO(tarball(name)), mode="r:gz") as tar:
        try:
            f = tar.extractfile(f"package/{member}")
        except KeyError:
            f = None
        if f is None:
            raise VendorError(f"{name} {PINS[name][0]} has no file {member}")
        return f.read().decode("utf-8")


def cjs_bundle(modules, entry, global_name):
    """One classic script from CommonJS sources ({require name: source}):
    the entry module's exports become ``window[global_name]``."""
    parts = ["(function () {", '"use strict";', "const defs = {};", "const cache = {};"]
    for key, source in modules.items():
        parts.append(f"defs[{json.dumps(key)}] = function (module, exports, "
                     f"require) {{\n{source}\n}};")
    parts += [
        "function require(key) {",
        "  if (!(key in defs)) throw new Error('not bundled: ' + key);",
        "  if (!(key in cache)) {",
        "    const module = {exports: {}};",
        "    cache[key] = module;",
        "    defs[key](module, module.exports, require);",
        "  }",
        "  return cache[key].exports;",
        "}",
        f"window.{global_name} = require({json.dumps(entry)});",
        "})();", ""]
    return "\n".join(parts)


def header(names):
    pins = ", ".join(f"{n} {PINS[n][0]}" for n in names)
    return (f"// Vendored from npm by tools/vendor_js.py ({pins}); "
            "see each package's LICENSE.\n")


def js_tiktoken_bundle():
    """js-tiktoken's lite build (Tiktoken on ranks the page supplies) as one
    classic script: ``window.jsTiktoken.Tiktoken``."""
    modules = {"js-tiktoken/lite": read("js-tiktoken", "dist/lite.cjs"),
               "base64-js": read("base64-js", "index.js")}
    return header(["js-tiktoken", "base64-js"]) + cjs_bundle(
        modules, "js-tiktoken/lite", "jsTiktoken")


def js_tiktoken_ranks(encoding):
    """The dict js-tiktoken's ``Tiktoken`` takes for a bundled vocabulary
    (``pat_str``, ``special_tokens``, ``bpe_ranks``), read from its
    ``dist/ranks/NAME.cjs`` (which is ``module.exports = {...};``)."""
    if encoding not in TIKTOKEN_RANKS:
        raise VendorError(f"encoding {encoding!r}: one of {TIKTOKEN_RANKS}")
    source = read("js-tiktoken", f"dist/ranks/{encoding}.cjs").strip()
    prefix = "module.exports = "
    if not source.startswith(prefix):
        raise VendorError(f"js-tiktoken dist/ranks/{encoding}.cjs: not "
                          f"'{prefix}{{...}}'")
    return json.loads(source[len(prefix):].rstrip(";"))


def main(argv=None):
    names = list(argv if argv is not None else sys.argv[1:]) or list(PINS)
    for name in names:
        data = tarball(name)
        print(f"{name} {PINS[name][0]}: {len(data):,} bytes, integrity checked, "
              f"cached in {cache_dir()}")


if __name__ == "__main__":
    main()
