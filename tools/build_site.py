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
                return m.group(2)
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


def site_link(root, target, sources):
    """Where a chapter's relative link should point on the site, or None.

    A chapter links to a sibling (its .md twin or .ipynb), to a kernel (the
    appendix section) or to a library file (a generated source page, added
    to ``sources``); figures and everything else are left alone.
    """
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
        return None
    path, _, fragment = target.partition("#")
    try:
        full = (root / "chapters" / path).resolve()
        rel = full.relative_to(root).as_posix()
    except (ValueError, OSError):
        return None
    if not full.is_file():
        return None
    if re.fullmatch(r"chapters/[0-9][0-9]_[^/]*\.(md|ipynb)", rel):
        return full.stem + ".ipynb" + (f"#{fragment}" if fragment else "")
    if re.fullmatch(r"kernels/[^/]+\.cl", rel):
        return f"../appendix/kernels.md#{slug(full.name)}"
    if full.suffix in SOURCE_SUFFIXES and full.stat().st_size < 200_000:
        sources.add(rel)
        return f"../appendix/sources.md#{slug(rel)}"
    return None


def rewrite_links(text, root, sources):
    out, fence = [], None
    for line in text.splitlines(keepends=True):
        m = re.match(r"\s*(`{3,}|~{3,})", line)
        if m and (fence is None or m.group(1)[0] == fence[0]):
            fence = None if fence else m.group(1)
        if fence is None:
            line = LINK.sub(lambda m: m.group(1) + (
                site_link(root, m.group(2), sources) or m.group(2))
                + m.group(3), line)
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


def benchmarks(root):
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if BENCH_START in text and BENCH_END in text:
        table = text.split(BENCH_START, 1)[1].split(BENCH_END, 1)[0].strip()
        if "|" in table:
            return ("Measured by `make bench` (the README says on which "
                    "machine, and how):\n\n" + table)
        if table:
            return table
    return ("*Benchmarks pending:* `make bench` measures netcl_lite against "
            "numpy, torch and tiktoken; the table appears here once the "
            "README holds it.")


def index_page(root, chapters):
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
            ":maxdepth: 1", "", "chapters/notation", "appendix/kernels",
            "appendix/sources", "```"]
    template = (SITE / "index.template.md").read_text(encoding="utf-8")
    return (template.replace("{{ chapters }}", chapter_list)
            .replace("{{ benchmarks }}", benchmarks(root))
            .replace("{{ appendix }}",
                     "- [Notation](chapters/notation.md): every symbol the "
                     "course uses.\n"
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
    for rel in sources:
        wanted[f"_repo/{rel}"] = (root / rel).read_bytes()
    wanted["appendix/sources.md"] = sources_page(sources)
    for fig in sorted((root / "figures").glob("*")):
        if fig.is_file():
            wanted[f"figures/{fig.name}"] = fig.read_bytes()
    kernels = sorted((root / "kernels").glob("*.cl"))
    for k in kernels:
        wanted[f"appendix/kernels/{k.name}"] = k.read_bytes()
    wanted["appendix/kernels.md"] = kernels_page(kernels)
    wanted["index.md"] = index_page(root, chapters)

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
             root / "README.md",
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
