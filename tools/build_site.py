"""Build the static course: ``python tools/build_site.py`` -> _build/html/index.html

1. Vendors MathJax 3 (npm ``mathjax``, pinned and hash-checked) into
   _build/vendor, once; pages then load it from _static/mathjax.
2. Assembles the Sphinx sources in _build/site_src: every chapter notebook
   ``chapters/NN_*.ipynb`` as stored (outputs included; nothing is executed),
   with a download link under its title; figures/; the landing page, written
   from site/index.template.md, the chapters' "Learning goals" sections and
   the README's benchmark table (between ``<!-- bench:start -->`` and
   ``<!-- bench:end -->``); an appendix listing every kernels/*.cl.
3. Runs Sphinx (myst-nb, furo theme, configuration in site/) into _build/html.

Nothing is rebuilt when no input changed since the last successful build
(``--force`` rebuilds). ``--root`` takes the chapters, figures, kernels and
README from another tree; ``--build`` puts everything under another folder.
"""

import argparse
import base64
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import unicodedata
import zipfile

try:
    import fcntl
except ImportError:  # not POSIX: builds are not serialised
    fcntl = None

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = ROOT / "site"

MATHJAX_VERSION = "3.2.2"
# npm's published integrity of mathjax@3.2.2 (sha512 of the .tgz).
MATHJAX_NPM_INTEGRITY = (
    "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZG"
    "JvtRZM1vO+geW0OhGw==")
# Fallback where npm is missing: the same MathJax 3.2.2 es5 files, from PyPI.
MATHJAX_WHEEL = "sphinx-mathjax-offline==0.0.2"
MATHJAX_WHEEL_SHA256 = (
    "206418155b2ff2f57496fb8501fdccae3da978e53031ff296c73729ba16062c4")
# The parts of es5/ that tex-chtml.js loads (fonts, lazily loaded TeX
# packages, the menu and its accessibility options); the other combined
# components are left out.
MATHJAX_KEEP = ["tex-chtml.js", "core.js", "loader.js", "startup.js",
                "a11y", "adaptors", "input", "output/chtml", "sre", "ui"]

BENCH_START, BENCH_END = "<!-- bench:start -->", "<!-- bench:end -->"
GOALS = re.compile(r"^(#{2,6})\s+Learning goals\b.*$", re.I | re.M)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BIB = "references.bib"
CITE_TARGET = "ref-"  # the bibliography's targets: (ref-KEY)=


def log(msg):
    print(f"[build_site] {msg}", flush=True)


# --- MathJax -------------------------------------------------------------

def _copy_mathjax(es5, dest):
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    target = tmp / "mathjax"
    for part in MATHJAX_KEEP:
        src = es5 / part
        if src.is_dir():
            shutil.copytree(src, target / part)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target / part)
    if not (target / "tex-chtml.js").exists():
        raise SystemExit(f"MathJax copy incomplete: no tex-chtml.js in {es5}")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)


def _mathjax_from_npm(workdir):
    npm = shutil.which("npm")
    if not npm:
        return None
    log(f"fetching mathjax@{MATHJAX_VERSION} with npm pack")
    subprocess.run([npm, "pack", f"mathjax@{MATHJAX_VERSION}", "--silent",
                    "--pack-destination", str(workdir)],
                   check=True, stdout=subprocess.DEVNULL)
    (tgz,) = workdir.glob("mathjax-*.tgz")
    digest = base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest())
    if "sha512-" + digest.decode() != MATHJAX_NPM_INTEGRITY:
        raise SystemExit(f"{tgz.name}: integrity mismatch, refusing to use it")
    with tarfile.open(tgz) as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith("package/es5/") and m.isfile()
                   and ".." not in m.name.split("/")]
        try:
            tar.extractall(workdir, members=members, filter="data")
        except TypeError:  # Python without tarfile extraction filters
            tar.extractall(workdir, members=members)
    return workdir / "package" / "es5"


def _mathjax_from_pypi(workdir):
    log(f"npm not found: fetching MathJax {MATHJAX_VERSION} from PyPI "
        f"({MATHJAX_WHEEL})")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                    "--no-deps", "--dest", str(workdir), MATHJAX_WHEEL],
                   check=True)
    (whl,) = workdir.glob("*.whl")
    if hashlib.sha256(whl.read_bytes()).hexdigest() != MATHJAX_WHEEL_SHA256:
        raise SystemExit(f"{whl.name}: sha256 mismatch, refusing to use it")
    prefix = "sphinx-mathjax-offline/static/mathjax/"
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                out = workdir / "es5" / name[len(prefix):]
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(z.read(name))
    return workdir / "es5"


def vendor_mathjax(build):
    """Return a folder holding mathjax/tex-chtml.js (fetched once, cached).

    COURSE_MATHJAX_ES5 may name an existing MathJax 3 es5/ folder, for a
    machine without any registry.
    """
    dest = build / "vendor" / f"mathjax-{MATHJAX_VERSION}"
    if (dest / "mathjax" / "tex-chtml.js").exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    local = os.environ.get("COURSE_MATHJAX_ES5")
    if local:
        _copy_mathjax(pathlib.Path(local), dest)
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        es5 = _mathjax_from_npm(tmp) or _mathjax_from_pypi(tmp)
        _copy_mathjax(es5, dest)
    return dest


# --- sources ---------------------------------------------------------------

def chapter_notebooks(root):
    return sorted((root / "chapters").glob("[0-9][0-9]_*.ipynb"))


def cell_source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def markdown_cells(nb):
    return [cell_source(c) for c in nb["cells"] if c["cell_type"] == "markdown"]


def chapter_title(nb, fallback):
    for text in markdown_cells(nb):
        for line in text.splitlines():
            m = HEADING.match(line)
            if m and len(m.group(1)) == 1:
                return plain_heading(m.group(2))
    return fallback


def learning_goals(nb):
    """The body of the chapter's "Learning goals" section, as markdown."""
    for text in markdown_cells(nb):
        m = GOALS.search(text)
        if not m:
            continue
        level, body = len(m.group(1)), []
        for line in text[m.end():].splitlines():
            h = HEADING.match(line)
            if h and len(h.group(1)) <= level:
                break
            body.append(line)
        return "\n".join(body).strip()
    return ""


# --- plain text for titles, search results and alt text --------------------

GREEK = {name: chr(code) for name, code in [
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4),
    ("epsilon", 0x3B5), ("varepsilon", 0x3B5), ("zeta", 0x3B6),
    ("eta", 0x3B7), ("theta", 0x3B8), ("iota", 0x3B9), ("kappa", 0x3BA),
    ("lambda", 0x3BB), ("mu", 0x3BC), ("nu", 0x3BD), ("xi", 0x3BE),
    ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4),
    ("phi", 0x3C6), ("varphi", 0x3C6), ("chi", 0x3C7), ("psi", 0x3C8),
    ("omega", 0x3C9), ("Gamma", 0x393), ("Delta", 0x394), ("Theta", 0x398),
    ("Lambda", 0x39B), ("Pi", 0x3A0), ("Sigma", 0x3A3), ("Phi", 0x3A6),
    ("Psi", 0x3A8), ("Omega", 0x3A9)]}
SYMBOLS = {"cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥",
           "geq": "≥", "approx": "≈", "ne": "≠", "neq": "≠", "infty": "∞",
           "to": "→", "rightarrow": "→", "leftarrow": "←", "in": "∈",
           "sum": "∑", "prod": "∏", "pm": "±", "ldots": "…", "dots": "…",
           "cdots": "⋯", "top": "ᵀ", "|": "‖", "ell": "ℓ", "partial": "∂",
           "nabla": "∇", "odot": "⊙", "otimes": "⊗", "sim": "∼", "%": "%",
           "{": "{", "}": "}", ",": " ", ";": " ", " ": " ", "quad": " "}
OPERATORS = set("·×≤≥≈≠→←∈±∼⊙⊗")
SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx",
               "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
SUP = dict(zip("0123456789+-=()inT",
               "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀ"))
MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$")


def _tex_group(s, i):
    """The argument of a TeX command at s[i:]: ({...} or one token, end)."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return "", i
    if s[i] == "{":
        depth = 0
        for j in range(i, len(s)):
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1:j], j + 1
        return s[i + 1:], len(s)
    if s[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", s[i:])
        return m.group(0), i + len(m.group(0))
    return s[i], i + 1


def _script(text, table, mark):
    return ("".join(table[c] for c in text) if text and all(c in table for c in text)
            else f"{mark}{text}" if len(text) == 1 else f"{mark}({text})")


def tex_to_text(tex):
    """Inline TeX as plain Unicode text, for places that cannot typeset it
    (page titles, the sidebar, search results, alt text).

    >>> tex_to_text(r"1/\\sqrt{d_k}")
    '1/√dₖ'
    """
    out, i = [], 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            name, i = m.group(1), i + len(m.group(0))
            if name == "sqrt":
                arg, i = _tex_group(tex, i)
                arg = tex_to_text(arg)
                out.append("√" + (arg if len(arg) <= 2 or arg.isalnum()
                                  else f"({arg})"))
            elif name == "frac":
                num, i = _tex_group(tex, i)
                den, i = _tex_group(tex, i)
                out.append(f"{tex_to_text(num)}/{tex_to_text(den)}")
            elif name in ("left", "right", "big", "Big", "bigl", "bigr",
                          "displaystyle", "limits", "!"):
                continue
            elif name in GREEK:
                out.append(GREEK[name])
            elif name in SYMBOLS:  # operators and relations get spaces
                symbol = SYMBOLS[name]
                out.append(f" {symbol} " if symbol in OPERATORS else symbol)
            elif name == "mathcal":
                arg, i = _tex_group(tex, i)
                out.append({"N": "𝒩", "L": "ℒ", "O": "𝒪"}.get(arg, arg))
            elif name in ("mathbf", "mathrm", "text", "textrm", "mathit",
                          "boldsymbol", "operatorname", "textbf", "mathsf",
                          "texttt", "emph", "textit", "hat", "tilde", "bar",
                          "vec", "mathbb"):
                arg, i = _tex_group(tex, i)
                out.append(tex_to_text(arg))
            else:  # log, exp, max, softmax, ...: the name reads well
                out.append(name)
        elif c in "_^":
            arg, i = _tex_group(tex, i + 1)
            arg = tex_to_text(arg)
            out.append(_script(arg, SUB if c == "_" else SUP, c))
        elif c in "{}":
            i += 1
        else:
            out.append(c)
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def plain_heading(text):
    """A markdown heading's text with every $...$ replaced by tex_to_text."""
    return MATH_SPAN.sub(lambda m: tex_to_text(m.group(1) or m.group(2)), text)


def _literal(node):
    """The text of a string literal; an f-string's fields become '…'."""
    import ast
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…"
                       for v in node.values)
    return None


def figure_alt(source):
    """Alt text for the plot a code cell draws, read from its matplotlib
    calls: titles, axis labels and legend labels.

    >>> figure_alt('ax.set_title("Loss")\\nax.set_xlabel("step")')
    'Plot: Loss. x axis: step.'
    """
    import ast
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    found = {"title": [], "x": [], "y": [], "label": []}
    kinds = {"set_title": "title", "suptitle": "title", "title": "title",
             "set_xlabel": "x", "xlabel": "x", "set_ylabel": "y",
             "ylabel": "y"}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if name in kinds and node.args:
            text = _literal(node.args[0])
            if text:
                found[kinds[name]].append(text)
        for kw in node.keywords:
            if kw.arg == "label":
                text = _literal(kw.value)
                if text:
                    found["label"].append(text)

    def join(items):
        seen = []
        for item in items:
            item = plain_heading(item.replace("\n", " ")).strip()
            if item and item not in seen:
                seen.append(item)
        return "; ".join(seen)

    parts = []
    if found["title"]:
        parts.append(f"Plot: {join(found['title'])}.")
    if found["x"]:
        parts.append(f"x axis: {join(found['x'])}.")
    if found["y"]:
        parts.append(f"y axis: {join(found['y'])}.")
    if found["label"]:
        parts.append(f"Series: {join(found['label'])}.")
    if not parts:
        return ""
    alt = " ".join(parts)
    return alt if len(alt) <= 400 else alt[:399].rstrip() + "…"


def first_comment(source):
    for line in source.splitlines():
        m = re.match(r"\s*#\s*(.{8,})", line)
        if m:
            return m.group(1).strip()
    return ""


CARRIAGE = re.compile(r"[^\n]*\r(?=[^\n])")


def site_outputs(cell, chapter):
    """Outputs as a reader should see them: a progress bar's \\r updates
    collapsed to the last one (as Jupyter shows it), every image with alt
    text (kept when the cell's metadata gives one)."""
    outputs = cell.get("outputs", [])
    merged = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            prev = merged[-1]
            prev["text"] = cell_text(prev) + cell_text(out)
            continue
        if out.get("output_type") == "stream":
            out = dict(out, text=cell_text(out))
        merged.append(out)
    for out in merged:
        if out.get("output_type") == "stream":
            out["text"] = CARRIAGE.sub("", out["text"]).replace("\r\n", "\n")
    cell["outputs"] = merged
    has_image = any(k.startswith("image/") for o in merged
                    for k in o.get("data", {}))
    if not has_image:
        return
    meta = cell.setdefault("metadata", {})
    image = meta.setdefault("mystnb", {}).setdefault("image", {})
    if not image.get("alt"):
        src = cell_source(cell)
        image["alt"] = (figure_alt(src) or first_comment(src)
                        or f"A figure drawn by the code above ({chapter})")


def cell_text(out):
    text = out.get("text", "")
    return "".join(text) if isinstance(text, list) else text


# --- the bibliography ------------------------------------------------------

BIB_ENTRY = re.compile(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", re.M)


def _bib_value(text, i):
    """A field value at text[i:]: {...}, "..." or a bare word; (value, end)."""
    if text[i] == "{":
        depth = 0
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                return text[i + 1:j], j + 1
        raise ValueError("unbalanced braces")
    if text[i] == '"':
        j = text.index('"', i + 1)
        return text[i + 1:j], j + 1
    m = re.match(r"[^,}\s]+", text[i:])
    return m.group(0), i + len(m.group(0))


def read_bib(path):
    """references.bib as {key: {"type": ..., field: value}}, in file order.
    A small reader for the subset of BibTeX the course uses."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    entries = {}
    for m in BIB_ENTRY.finditer(text):
        kind, key = m.group(1).lower(), m.group(2)
        if kind in ("comment", "string", "preamble"):
            continue
        fields, i = {"type": kind}, m.end()
        while True:
            f = re.compile(r"\s*(\w[\w-]*)\s*=\s*").match(text, i)
            if not f:
                break
            value, i = _bib_value(text, f.end())
            fields[f.group(1).lower()] = re.sub(r"\s+", " ", value).strip()
            i = re.compile(r"\s*,?").match(text, i).end()
        if key in entries:
            raise SystemExit(f"references.bib: duplicate key {key!r}")
        entries[key] = fields
    return entries


def _bib_text(value):
    """BibTeX field text as markdown: braces dropped, TeX accents kept
    as the letters they make, -- as an en dash."""
    accents = {"'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302",
               "~": "\u0303", "c": "\u0327", "v": "\u030C"}
    value = re.sub(r"\\([`'\"^~cv])\{?(\w)\}?",
                   lambda m: m.group(2) + accents[m.group(1)], value)
    letters = {"L": "Ł", "l": "ł", "i": "ı", "o": "ø", "O": "Ø", "ss": "ß",
               "aa": "å", "ae": "æ"}
    value = re.sub(r"\\(ss|aa|ae|[LlioO])\b\s*",
                   lambda m: letters[m.group(1)], value)
    value = value.replace("--", "–").replace("\\&", "&")
    return unicodedata.normalize("NFC", value.replace("{", "").replace("}", ""))


def bib_authors(value):
    if value.startswith("{") and value.endswith("}"):  # {An Organisation}
        return _bib_text(value)
    names = []
    for name in re.split(r"\s+and\s+", value):
        name = _bib_text(name).strip()
        if "," in name:
            last, first = (p.strip() for p in name.split(",", 1))
            name = f"{first} {last}".strip()
        names.append(name)
    if len(names) > 8:  # a long list: the first six, then "and others"
        names = names[:6] + ["others"]
    if len(names) > 2 and names[-1] == "others":
        return ", ".join(names[:-1]) + " and others"
    return names[0] if len(names) == 1 else (
        ", ".join(names[:-1]) + " and " + names[-1])


def _first_surname(value):
    if value.startswith("{"):
        return _bib_text(value)
    first = _bib_text(re.split(r"\s+and\s+", value)[0]).strip()
    return first.split(",")[0] if "," in first else (first.split() or [""])[-1]


def bib_reference(fields):
    """One entry as a markdown paragraph (authors, year, title, venue, link)."""
    parts = [f"{bib_authors(fields.get('author', 'Anonymous'))} "
             f"({fields.get('year', 'n.d.')}).",
             f"*{_bib_text(fields.get('title', ''))}*."]
    venue = fields.get("journal") or fields.get("booktitle") or fields.get(
        "howpublished") or fields.get("publisher") or fields.get("institution")
    if venue and not (fields.get("eprint") and venue == "arXiv preprint"):
        venue = _bib_text(venue)
        if fields.get("volume"):
            venue += " " + fields["volume"] + (
                f"({fields['number']})" if fields.get("number") else "")
        if fields.get("pages"):
            venue += ", pp. " + _bib_text(fields["pages"])
        parts.append(venue + ".")
    if fields.get("note"):
        parts.append(_bib_text(fields["note"]) + ".")
    if fields.get("eprint"):
        parts.append(f"arXiv:{fields['eprint']}.")
    url = fields.get("url") or (
        f"https://doi.org/{fields['doi']}" if fields.get("doi") else
        f"https://arxiv.org/abs/{fields['eprint']}" if fields.get("eprint")
        else "")
    if url:
        parts.append(f"<{url}>")
    return " ".join(parts)


CITE_LINK = re.compile(r"\]\((?:\.\./)?references\.bib#([^)\s]+)\)")


def citations(root, chapters):
    """{key: [chapter stems citing it]}; a key missing from references.bib
    stops the build, naming the chapter."""
    entries = read_bib(root / BIB)
    cited, missing = {}, []
    for path, nb in chapters:
        for text in markdown_cells(nb):
            for key in CITE_LINK.findall(text):
                if key not in entries:
                    missing.append(f"{path.name}: {key}")
                elif path.stem not in cited.setdefault(key, []):
                    cited[key].append(path.stem)
    if missing:
        raise SystemExit(f"citations not in {BIB}: " + ", ".join(missing))
    return cited


def bibliography_page(entries, cited):
    """The bibliography: every entry of references.bib, each with a target
    the chapters' citations link to and the chapters that cite it."""
    out = ["# Bibliography", "",
           "The works the chapters cite, from the course's one bibliography "
           "file, `references.bib`. Each chapter's *Further reading* section "
           "says what it takes from them.", ""]
    if not entries:
        out += ["*No entries yet.*", ""]
    order = sorted(entries, key=lambda k: (
        _first_surname(entries[k].get("author", "")).lower(),
        entries[k].get("year", ""), k))
    for key in order:
        where = cited.get(key, [])
        back = ("Cited in " + ", ".join(
            f"[{stem[:2]}](../chapters/{stem}.ipynb)" for stem in where) + "."
                if where else "")
        out += [f"({CITE_TARGET}{key})=", "",
                bib_reference(entries[key]) + (f" {back}" if back else ""), ""]
    return "\n".join(out)


def download_block(name):
    return (f":::{{container}} notebook-download\n"
            f"{{download}}`Download this chapter as a notebook ({name}) "
            f"<../_notebooks/{name}>`, or run it in JupyterLab with "
            f"`make lab`.\n:::\n")


def site_notebook(nb, name, root, sources):
    """A copy of the notebook for the site: the download link under its
    title, and links to repository files pointed at pages of the site."""
    nb = json.loads(json.dumps(nb))
    # The saved state of live widgets is only of use to a running kernel; the
    # site shows the interactive figures' HTML players instead.
    nb["metadata"].pop("widgets", None)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = rewrite_links(cell_source(cell), root, sources)
        elif cell["cell_type"] == "code":
            site_outputs(cell, name)
    block = download_block(name)
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        lines = cell_source(cell).splitlines(keepends=True)
        for i, line in enumerate(lines):
            m = HEADING.match(line.rstrip("\n"))
            if m and len(m.group(1)) == 1:
                head = "".join(lines[:i + 1]).rstrip("\n") + "\n\n"
                tail = "".join(lines[i + 1:]).lstrip("\n")
                cell["source"] = head + block + ("\n" + tail if tail else "")
                return nb
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {},
                           "source": block})
    return nb


LINK = re.compile(r"(\]\()([^()\s]+)(\))")
SOURCE_SUFFIXES = {".py": "python", ".cl": "opencl"}


def slug(title):
    """GitHub-style heading anchor, as MyST makes it (myst_heading_anchors)."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def site_link(root, target, sources, folder="chapters"):
    """Where a relative link of a page in ``folder`` (chapters/, or "" for
    the landing page) should point on the site, or None.

    A chapter links to a sibling (its .md twin or .ipynb), to a kernel (the
    appendix section) or to a library file (a generated source page, added
    to ``sources``); figures and everything else are left alone.
    """
    up = "../" if folder else ""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
        return None
    path, _, fragment = target.partition("#")
    try:
        full = (root / folder / path).resolve()
        rel = full.relative_to(root).as_posix()
    except (ValueError, OSError):
        return None
    if not full.is_file():
        return None
    if rel == BIB:  # a citation: the bibliography page's entry
        return f"#{CITE_TARGET}{fragment}"
    if re.fullmatch(r"chapters/[0-9][0-9]_[^/]*\.(md|ipynb)", rel):
        return (f"{up}chapters/" if not folder else "") + full.stem + (
            ".ipynb" + (f"#{fragment}" if fragment else ""))
    if re.fullmatch(r"kernels/[^/]+\.cl", rel):
        return f"{up}appendix/kernels.md#{slug(full.name)}"
    if full.suffix in SOURCE_SUFFIXES and full.stat().st_size < 200_000:
        sources.add(rel)
        return f"{up}appendix/sources.md#{slug(rel)}"
    return None


def rewrite_links(text, root, sources, folder="chapters"):
    out, fence = [], None
    for line in text.splitlines(keepends=True):
        m = re.match(r"\s*(`{3,}|~{3,})", line)
        if m and (fence is None or m.group(1)[0] == fence[0]):
            fence = None if fence else m.group(1)
        if fence is None:
            line = LINK.sub(lambda m: m.group(1) + (
                site_link(root, m.group(2), sources, folder) or m.group(2))
                + m.group(3), line)
            h = HEADING.match(line.rstrip("\n"))
            if h and "$" in h.group(2):
                # titles reach the sidebar, the tab and search results, which
                # cannot typeset TeX: plain Unicode text everywhere
                line = f"{h.group(1)} {plain_heading(h.group(2))}\n"
        out.append(line)
    return "".join(out)


def sources_page(sources):
    out = ["# Appendix: library files the chapters link to", "",
           "The Python and kernel sources that the chapters point to, quoted "
           "from the repository when the site was built.", ""]
    if not sources:
        out += ["*None yet.*", ""]
    for rel in sorted(sources):
        language = SOURCE_SUFFIXES[pathlib.PurePosixPath(rel).suffix]
        out += [f"## {rel}", "", "```{literalinclude} /_repo/" + rel,
                f":language: {language}", ":linenos:", "```", ""]
    return "\n".join(out)


def benchmarks(root, sources):
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if BENCH_START in text and BENCH_END in text:
        table = text.split(BENCH_START, 1)[1].split(BENCH_END, 1)[0].strip()
        # the README's links are relative to the repository's root
        table = rewrite_links(table, root, sources, folder="")
        if "|" in table:
            return ("Measured by `make bench` (the README says on which "
                    "machine, and how):\n\n" + table)
        if table:
            return table
    return ("*Benchmarks pending:* `make bench` measures netcl_lite against "
            "numpy, torch and tiktoken; the table appears here once the "
            "README holds it.")


def index_page(root, chapters, sources):
    entries = []
    for path, nb in chapters:
        title = chapter_title(nb, path.stem)
        goals = learning_goals(nb) or "*Learning goals to come.*"
        indented = "\n".join(("   " + line) if line.strip() else ""
                             for line in goals.splitlines())
        entries.append(f"[{title}](chapters/{path.name})\n:  {indented.lstrip()}\n")
    chapter_list = ("::::{container} chapter-list\n" + "\n".join(entries) + "::::"
                    if entries else "*The chapters are being written.*")
    toc = ["```{toctree}", ":hidden:", ":caption: Chapters", ":maxdepth: 1", ""]
    toc += [f"chapters/{p.stem}" for p, _ in chapters]
    toc += ["```", "", "```{toctree}", ":hidden:", ":caption: Appendix",
            ":maxdepth: 1", "", "chapters/notation", "appendix/bibliography",
            "appendix/kernels",
            "appendix/sources", "```"]
    template = (SITE / "index.template.md").read_text(encoding="utf-8")
    return (template.replace("{{ chapters }}", chapter_list)
            .replace("{{ benchmarks }}", benchmarks(root, sources))
            .replace("{{ appendix }}",
                     "- [Notation](chapters/notation.md): every symbol the "
                     "course uses.\n"
                     "- [Bibliography](appendix/bibliography.md): the works "
                     "the chapters cite.\n"
                     "- [The OpenCL kernels](appendix/kernels.md): every "
                     "`kernels/*.cl`, highlighted.\n"
                     "- [Library files the chapters link to]"
                     "(appendix/sources.md), quoted as they are.")
            .replace("{{ toctree }}", "\n".join(toc)))


def kernel_summary(text):
    """The first sentence of the kernel file's opening comment."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("//") or not line[2:].strip():
            break
        lines.append(line[2:].strip())
    prose = " ".join(lines)
    m = re.match(r"(.+?[.:])(\s|$)", prose)
    first = m.group(1) if m else prose
    return first[:-1] + "." if first.endswith(":") else first


def kernels_page(kernels):
    out = ["# Appendix: the OpenCL kernels", "",
           "Every kernel of `netcl_lite`, as the library compiles it "
           "(`kernels/*.cl`). The Python ops in "
           "`netcl_lite.functional` launch a forward kernel and, for "
           "autograd, its backward kernel from one of these files.", ""]
    for path in kernels:
        text = path.read_text(encoding="utf-8")
        out += [f"## {path.name}", ""]
        summary = kernel_summary(text)
        if summary:
            out += [summary, ""]
        names = re.findall(r"__kernel\s+void\s+(\w+)", text)
        if names:
            out += ["Kernels: " + ", ".join(f"`{n}`" for n in names) + ".", ""]
        out += ["```{literalinclude} kernels/" + path.name,
                ":language: opencl", ":linenos:", "```", ""]
    if not kernels:
        out += ["*No kernels found.*", ""]
    return "\n".join(out)


def write_if_changed(path, data):
    """Write only what changed, so Sphinx's incremental build stays small."""
    data = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def assemble(root, src):
    """Write every source file under src; delete what is no longer there."""
    wanted = {}
    chapters = []
    sources = set()
    for path in chapter_notebooks(root):
        nb = json.loads(path.read_text(encoding="utf-8"))
        chapters.append((path, nb))
        wanted[f"chapters/{path.name}"] = json.dumps(
            site_notebook(nb, path.name, root, sources), indent=1,
            ensure_ascii=False)
        wanted[f"_notebooks/{path.name}"] = path.read_bytes()
    notation = root / "chapters" / "notation.md"
    if notation.exists():
        wanted["chapters/notation.md"] = rewrite_links(
            notation.read_text(encoding="utf-8"), root, sources)
    wanted["index.md"] = index_page(root, chapters, sources)  # adds sources
    for rel in sources:
        wanted[f"_repo/{rel}"] = (root / rel).read_bytes()
    wanted["appendix/sources.md"] = sources_page(sources)
    wanted["appendix/bibliography.md"] = bibliography_page(
        read_bib(root / BIB), citations(root, chapters))
    for fig in sorted((root / "figures").glob("*")):
        if fig.is_file():
            wanted[f"figures/{fig.name}"] = fig.read_bytes()
    kernels = sorted((root / "kernels").glob("*.cl"))
    for k in kernels:
        wanted[f"appendix/kernels/{k.name}"] = k.read_bytes()
    wanted["appendix/kernels.md"] = kernels_page(kernels)

    for rel, data in wanted.items():
        write_if_changed(src / rel, data)
    for path in sorted(src.rglob("*"), reverse=True):
        rel = path.relative_to(src).as_posix()
        if path.is_file() and rel not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return [p for p, _ in chapters]


def prune_html(html, src):
    """Delete pages whose source is gone (Sphinx keeps them)."""
    for page in sorted(html.rglob("*.html"), reverse=True):
        rel = page.relative_to(html)
        if rel.parts[0].startswith("_"):
            continue
        doc = rel.with_suffix("").as_posix()
        if doc in ("search", "genindex", "py-modindex"):
            continue
        if not any((src / f"{doc}{ext}").exists() for ext in (".md", ".ipynb")):
            page.unlink()
    for d in sorted((p for p in html.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()


def inputs_digest(root):
    h = hashlib.sha256()
    files = [*chapter_notebooks(root), root / "chapters" / "notation.md",
             root / "README.md", root / BIB,
             *sorted((root / "figures").glob("*")),
             *sorted((root / "kernels").glob("*.cl")),
             *sorted(p for p in SITE.rglob("*") if p.is_file()),
             pathlib.Path(__file__).resolve()]
    for f in files:
        if f.is_file():
            h.update(str(f).encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(MATHJAX_VERSION.encode())
    return h.hexdigest()


def build(root=ROOT, build_dir=None, force=False, quiet=False):
    """Build the site; return the path of its index.html."""
    root = pathlib.Path(root).resolve()
    build_dir = pathlib.Path(build_dir or root / "_build").resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    html = build_dir / "html"
    stamp = build_dir / "site-inputs.sha256"
    with open(build_dir / ".site-build.lock", "w") as lock:
        if fcntl:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time per folder
        digest = inputs_digest(root)
        if (not force and (html / "index.html").exists() and stamp.exists()
                and stamp.read_text() == digest):
            log(f"up to date: {html / 'index.html'}")
            return html / "index.html"
        start = time.perf_counter()
        stamp.unlink(missing_ok=True)
        mathjax = vendor_mathjax(build_dir)
        chapters = assemble(root, build_dir / "site_src")
        log(f"{len(chapters)} chapter notebook(s); running Sphinx")
        warnings = build_dir / "site-warnings.log"
        env = dict(os.environ, COURSE_MATHJAX_STATIC=str(mathjax))
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q",
               "-c", str(SITE), "-d", str(build_dir / "doctrees"),
               "-w", str(warnings), str(build_dir / "site_src"), str(html)]
        if force:
            cmd.insert(3, "-E")
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if proc.returncode:
            sys.stderr.write(proc.stdout)
            raise SystemExit(f"sphinx-build failed ({proc.returncode})")
        prune_html(html, build_dir / "site_src")
        count = sum(1 for line in warnings.read_text().splitlines()
                    if "WARNING" in line or "ERROR" in line)
        if count and not quiet:
            log(f"{count} Sphinx warning(s), in {warnings}")
        stamp.write_text(digest)
        log(f"built in {time.perf_counter() - start:.1f} s")
        return html / "index.html"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=ROOT, type=pathlib.Path,
                    help="tree holding chapters/, figures/, kernels/")
    ap.add_argument("--build", default=None, type=pathlib.Path,
                    help="build folder (default: ROOT/_build)")
    ap.add_argument("--force", action="store_true", help="rebuild everything")
    args = ap.parse_args(argv)
    index = build(args.root, args.build, force=args.force)
    print(f"The course: {index}")


if __name__ == "__main__":
    main()
