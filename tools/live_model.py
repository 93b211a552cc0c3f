"""Chapter 09's trained model for the static course: the files that let the
page run it (``site/_static/live/model.js``, the ``model`` live
figure of tools/live_figures.py).

Executing chapter 09 writes ``figures/09_model.onnx`` (the trained model,
``DecoderLM.export_onnx``) and ``figures/09_shakespeare.bpe`` (its
tokenizer). When the site is built, ``prepare`` turns them, and
onnxruntime-web from npm (pinned below, fetched and checked by
tools/vendor_js.py), into classic scripts under ``BUILD/live/model``, and
``install`` copies those into the site's ``_static/live/model``:

    ort.wasm.min.js  onnxruntime-web's classic build (defines ``ort``)
    ort-wasm.js      window.LIVE_ORT = {wasm: base64 of its .wasm,
                                        glue: the text of its .mjs}
    ch09.js          window.LIVE_MODEL = {onnx: base64 of the graph,
                                          config, tokenizer}

A page opened from ``file://`` may add ``<script>`` elements but may not
fetch() files nor import modules, so everything arrives as a script, and
only when the reader asks for the model: the chapter's page itself stays
small. The tokenizer is in js-tiktoken's rank form (tools/live_figures.py's
``course_ranks``).

When a file is missing (the chapter not executed, onnxruntime-web neither
cached nor fetchable, or onnx not installed to read the graph's config),
the figure stays a flipbook and the build says why.
"""

import base64
import io
import json
import pathlib
import shutil
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import live_figures  # noqa: E402
import vendor_js  # noqa: E402

# npm package -> (version, the registry's dist.integrity of its tarball)
PINS = {"onnxruntime-web": ("1.30.0", "sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmos"
                            "XHF+CaRJmg8pZClzcV7svNc4rKY3jL02Vb7QmRMDs1SigqR4CXAf"
                            "KYQ==")}
vendor_js.PINS.update(PINS)  # fetched, checked and cached like the others
ORT = "onnxruntime-web"
ORT_JS, ORT_WASM, ORT_GLUE = ("dist/ort.wasm.min.js",
                              "dist/ort-wasm-simd-threaded.wasm",
                              "dist/ort-wasm-simd-threaded.mjs")
MODEL, TOKENIZER = "figures/09_model.onnx", "figures/09_shakespeare.bpe"
CONFIG_KEY = "netcl_lite.config"   # nn/onnx_export.py stores the config there


def log(msg):
    print(f"[live_model] {msg}", flush=True)


def package_file(name, member):
    """The bytes of one file of a pinned npm package."""
    with tarfile.open(fileobj=io.BytesIO(vendor_js.tarball(name)),
                      mode="r:gz") as tar:
        try:
            f = tar.extractfile(f"package/{member}")
        except KeyError:
            f = None
        if f is None:
            raise vendor_js.VendorError(f"{name} has no file {member}")
        return f.read()


def model_config(path):
    """The DecoderConfig dict stored in the graph's metadata."""
    import onnx

    proto = onnx.load(str(path), load_external_data=False)
    meta = {p.key: p.value for p in proto.metadata_props}
    if CONFIG_KEY not in meta:
        raise ValueError(f"{path}: no {CONFIG_KEY} in its metadata; write it "
                         "with DecoderLM.export_onnx")
    return json.loads(meta[CONFIG_KEY])


def b64(data):
    return base64.b64encode(data).decode("ascii")


def model_files(root):
    """{name: text} of the files under _static/live/model."""
    root = pathlib.Path(root)
    for rel in (MODEL, TOKENIZER):
        if not (root / rel).is_file():
            raise FileNotFoundError(f"{rel} is missing: execute "
                                    "chapters/09_train_a_decoder.md, which saves it")
    version = vendor_js.PINS[ORT][0]
    pat_str = vendor_js.js_tiktoken_ranks("cl100k_base")["pat_str"]
    note = (f"// onnxruntime-web {version} (MIT), vendored from npm by "
            "tools/live_model.py.\n")
    model = {"onnx": b64((root / MODEL).read_bytes()),
             "config": model_config(root / MODEL),
             "tokenizer": live_figures.course_ranks(root / TOKENIZER, pat_str)}
    return {
        "ort.wasm.min.js": note + package_file(ORT, ORT_JS).decode("utf-8"),
        "ort-wasm.js": note + "window.LIVE_ORT = " + json.dumps(
            {"wasm": b64(package_file(ORT, ORT_WASM)),
             "glue": package_file(ORT, ORT_GLUE).decode("utf-8")}) + ";\n",
        "ch09.js": ("// Chapter 09's trained model (figures/09_model.onnx) and "
                    "its tokenizer, for the page (tools/live_model.py).\n"
                    "window.LIVE_MODEL = " + json.dumps(model) + ";\n"),
    }


def prepare(root, build_dir, shown):
    """Write the files under build_dir/live/model (only those that changed);
    return ``shown`` without "model" when they cannot be made."""
    shown = set(shown)
    if "model" not in shown:
        return shown
    try:
        files = model_files(root)
    except (vendor_js.VendorError, OSError, ValueError, ImportError) as err:
        log(f"warning: the model figure stays a flipbook: {err}")
        return shown - {"model"}
    out = pathlib.Path(build_dir) / "live" / "model"
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path, data = out / name, text.encode("utf-8")
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
    for path in out.iterdir():
        if path.name not in files:
            path.unlink()
    return shown


def install(build_dir, html_dir):
    """Copy the prepared files into the site's _static/live/model."""
    source = pathlib.Path(build_dir) / "live" / "model"
    target = pathlib.Path(html_dir) / "_static" / "live" / "model"
    if target.exists():
        shutil.rmtree(target)
    if source.exists():
        shutil.copytree(source, target)


def inputs():
    """Files whose change must rebuild the site (figures/ is already one)."""
    return [pathlib.Path(__file__).resolve()]
