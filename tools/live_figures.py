"""The live figures of the static course: figures that compute in the page.

In JupyterLab a chapter's interactive figure is a ``netcl_lite.viz.player``
whose sliders re-run the kernels. The static site has no kernel, so there
the same cell shows a *live figure* instead: a few lines of JavaScript that
compute on whatever the reader types, offline and from ``file://``.

A chapter asks for one by a tag on the cell that builds its player,
``live-NAME`` (NAME one of ``FIGURES``). tools/build_site.py then

1. ``prepare``: writes the figures' files under ``BUILD/live/live``: the
   page-side code (site/_static/live/: ``live.js``, the shared
   contract, and ``NAME.js``, one per figure), js-tiktoken as one classic
   script (tools/vendor_js.py), and the vocabularies as classic scripts
   (``vocab/NAME.js``), which a page adds only when the reader picks one:
   from ``file://``, Chromium refuses fetch() and module imports.
   The chapter's own tokenizer is the file chapter 01 saves,
   figures/01_shakespeare.bpe, exported in js-tiktoken's rank format.
2. ``place``: in each chapter, a tagged cell's outputs become the figure's
   element (``<div data-live="NAME">`` and its scripts), and every
   ``hide-input`` cell's toggle says, from its first comment, what it builds.
3. ``install``: copies the files into the built site's ``_static/live``.

A figure that cannot be prepared (js-tiktoken neither cached nor
fetchable) keeps its flipbook, with a warning.

The contract each figure keeps (the browser tests read it): inputs are form
elements with ``name`` attributes, and after every change the figure writes
its result as JSON into its ``[data-output]`` element (see live.js).
"""

import base64
import html
import json
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import vendor_js  # noqa: E402

STATIC = ROOT / "site" / "_static" / "live"  # the page-side code
FIGURES = ("bpe", "attention", "scaling", "rope", "online-softmax", "model")
TITLES = {"bpe": "Tokenizer playground", "attention": "The worked example, editable",
          "scaling": "Scores and softmax against d_k", "rope": "RoPE at any position",
          "online-softmax": "Online softmax, tile by tile",
          "model": "The trained model reads your sentence"}
COURSE_TOKENIZER = "figures/01_shakespeare.bpe"
TAG = "live-"


def log(msg):
    print(f"[live_figures] {msg}", flush=True)


# --- what the pages load ------------------------------------------------------

def vocab_script(name, ranks):
    """A classic script that adds one vocabulary to ``window.LIVE_VOCAB``."""
    blob = json.dumps(ranks, separators=(",", ":"), ensure_ascii=True)
    return ("// A vocabulary for the tokenizer playground (tools/live_figures.py)."
            f"\n(window.LIVE_VOCAB = window.LIVE_VOCAB || {{}})[{json.dumps(name)}]"
            f" = {blob};\n")


def course_ranks(path, pat_str):
    """Chapter 01's tokenizer in js-tiktoken's form: token i's bytes (base64)
    at rank i, the GPT-4 split in JavaScript's regex dialect (``pat_str``,
    from js-tiktoken's cl100k_base), and each merge's pair, for stepping
    through the merges."""
    from netcl_lite.text import GPT4_SPLIT_PATTERN, BPETokenizer

    tok = BPETokenizer.load(path)
    if tok.pattern != GPT4_SPLIT_PATTERN:
        raise ValueError(f"{path}: its split pattern is not GPT4_SPLIT_PATTERN; "
                         "the page has that pattern only in JavaScript's dialect")
    pieces = [tok.decode_bytes([i]) for i in range(tok.vocab_size)]
    if len(set(pieces)) != len(pieces):
        raise ValueError(f"{path}: two tokens share their bytes; tiktoken's rank "
                         "format cannot hold that")
    tokens = [base64.b64encode(p).decode("ascii") for p in pieces]
    return {"pat_str": pat_str, "special_tokens": tok.special_tokens,
            "bpe_ranks": "! 0 " + " ".join(tokens),
            "merges": [list(pair) for pair in tok.merges]}


def live_files(root):
    """{relative path under _static/live: text}, and the figures that
    cannot be shown (with why)."""
    files, missing = {}, {}
    for path in sorted(STATIC.glob("*")):
        if path.is_file():
            files[path.name] = path.read_text(encoding="utf-8")
    try:
        files["js-tiktoken.js"] = vendor_js.js_tiktoken_bundle()
        cl100k = vendor_js.js_tiktoken_ranks("cl100k_base")
        for name in vendor_js.TIKTOKEN_RANKS:
            ranks = (cl100k if name == "cl100k_base"
                     else vendor_js.js_tiktoken_ranks(name))
            files[f"vocab/{name}.js"] = vocab_script(name, ranks)
        course = root / COURSE_TOKENIZER
        if not course.is_file():
            raise FileNotFoundError(f"{COURSE_TOKENIZER} is missing: execute "
                                    "chapters/01_byte_level_bpe.md, which saves it")
        files["vocab/course.js"] = vocab_script(
            "course", course_ranks(course, cl100k["pat_str"]))
    except (vendor_js.VendorError, OSError, ValueError) as err:
        missing["bpe"] = str(err)
    return files, missing


def prepare(root, build_dir):
    """Write the figures' files under build_dir/live (only those that
    changed); return the names of the figures that can be shown."""
    files, missing = live_files(pathlib.Path(root))
    out = pathlib.Path(build_dir) / "live" / "live"
    for rel, text in files.items():
        path = out / rel
        data = text.encode("utf-8")
        if not path.exists() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    for path in out.rglob("*"):
        if path.is_file() and path.relative_to(out).as_posix() not in files:
            path.unlink()
    for name, why in missing.items():
        log(f"warning: the {name} figure stays a flipbook: {why}")
    shown = {p.stem for p in STATIC.glob("*.js")} & set(FIGURES)
    return shown - set(missing)


def install(build_dir, html_dir):
    """Copy the prepared files into the site's _static/live."""
    source = pathlib.Path(build_dir) / "live" / "live"
    target = pathlib.Path(html_dir) / "_static" / "live"
    if target.exists():
        shutil.rmtree(target)
    if source.exists():
        shutil.copytree(source, target)


def inputs():
    """Files whose change must rebuild the site."""
    return [*sorted(p for p in STATIC.glob("*") if p.is_file()),
            pathlib.Path(__file__).resolve(), ROOT / "tools" / "vendor_js.py"]


# --- the chapters ----------------------------------------------------------------

def figure_html(name):
    """The element a chapter's cell shows in the site: an empty
    ``data-live`` element that its script fills, and the scripts."""
    if name not in FIGURES:
        raise ValueError(f"live figure {name!r}: one of {FIGURES}")
    title = html.escape(TITLES[name])
    return (f'<div class="live-figure" data-live="{name}" id="live-{name}" '
            f'role="group" aria-label="{title}">'
            f'<p class="live-title">{title}</p>'
            '<noscript>This figure computes in the page, and needs '
            'JavaScript.</noscript></div>\n'
            '<link rel="stylesheet" href="../_static/live/live.css">\n'
            '<script src="../_static/live/live.js"></script>\n'
            f'<script src="../_static/live/{name}.js"></script>\n')


def live_tag(cell):
    tags = [t for t in cell.metadata.get("tags", []) if t.startswith(TAG)]
    if len(tags) > 1:
        raise ValueError(f"a cell has two live-figure tags: {tags}")
    return tags[0][len(TAG):] if tags else None


def place(nb, shown, chapter=""):
    """Put the live figures into a chapter notebook (for the site only):
    the outputs of a cell tagged ``live-NAME`` become the figure, when NAME
    is in ``shown``; return the names placed."""
    import nbformat

    placed = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        if "hide-input" in tags:
            first = cell.source.lstrip().splitlines()[:1]
            if first and first[0].startswith("#"):
                prompt = first[0].lstrip("# ").rstrip(".")
                mystnb = cell.metadata.setdefault("mystnb", {})
                mystnb.setdefault("code_prompt_show", f"{prompt} (show the code)")
                mystnb.setdefault("code_prompt_hide", "Hide the code")
        name = live_tag(cell)
        if name is None:
            continue
        if name not in FIGURES:
            raise ValueError(f"{chapter}: tag {TAG}{name}: no such live figure "
                             f"(one of {FIGURES})")
        if name not in shown:
            continue
        cell.outputs = [nbformat.v4.new_output(
            "display_data", data={"text/html": figure_html(name),
                                  "text/plain": f"<live figure {name}>"})]
        placed.append(name)
    return placed
