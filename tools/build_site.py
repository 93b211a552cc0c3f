"""Build the static course: ``python tools/build_site.py`` -> _build/html/index.html

1. Assembles the Sphinx sources in _build/site_src: every chapter notebook
   ``chapters/NN_*.ipynb`` as stored (outputs included; nothing is executed),
   with a download link under its title; figures/; the landing page, written
   from site/index.template.md, the chapters' "Learning goals" sections and
   the README's benchmark table (between ``<!-- bench:start -->`` and
   ``<!-- bench:end -->``); an appendix listing every kernels/*.cl; the
   bibliography page (site/bibliography.md). A cell tagged ``live-NAME``
   shows a figure that computes in the page (tools/live_figures.py, whose
   files go to _static/live).
2. Runs Sphinx (configuration in site/: myst-nb, furo, sphinxcontrib-bibtex
   for references.bib, MathJax 3 from sphinx-mathjax-offline) into
   _build/html.

Nothing is rebuilt when no input changed since the last successful build
(``--force`` rebuilds). ``--root`` takes the chapters, figures, kernels,
README and references.bib from another tree; ``--build`` puts everything
under another folder.
"""

import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

try:
    import fcntl
except ImportError:  # not POSIX: builds are not serialised
    fcntl = None

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
sys.path.insert(0, str(ROOT / "tools"))
from plain_text import figure_alt, first_comment, plain_heading, tex_to_text  # noqa: E402,F401
import reference  # noqa: E402  (the API reference: tools/reference.py)
import live_figures  # noqa: E402
import live_model  # noqa: E402

BENCH_START, BENCH_END = "<!-- bench:start -->", "<!-- bench:end -->"
GOALS = re.compile(r"^(#{2,6})\s+Learning goals\b.*$", re.I | re.M)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BIB = "references.bib"
CITE_TARGET = "ref-"  # the bibliography entries' ids (site/conf.py: bibtex_cite_id)


def log(msg):
    print(f"[build_site] {msg}", flush=True)


# --- sources ---------------------------------------------------------------

def chapter_notebooks(root):
    return sorted((root / "chapters").glob("[0-9][0-9]_*.ipynb"))


def read_chapter(path):
    """The stored notebook, with each run of stream outputs merged and a
    progress bar's \\r redraws collapsed to the last one, as Jupyter shows
    them (nbconvert's CoalesceStreamsPreprocessor)."""
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor  # slow import

    nb = nbformat.read(path, as_version=4)
    return CoalesceStreamsPreprocessor().preprocess(nb, {})[0]


def markdown_cells(nb):
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


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


def give_alt_text(cell, chapter):
    """Every image a cell shows gets alt text (kept when the cell's metadata
    gives one)."""
    if not any(k.startswith("image/") for o in cell.get("outputs", [])
               for k in o.get("data", {})):
        return
    image = cell.metadata.setdefault("mystnb", {}).setdefault("image", {})
    if not image.get("alt"):
        image["alt"] = (figure_alt(cell.source) or first_comment(cell.source)
                        or f"A figure drawn by the code above ({chapter})")


# --- the site's pages ------------------------------------------------------

def download_block(name):
    return (f":::{{container}} notebook-download\n"
            f"{{download}}`Download this chapter as a notebook ({name}) "
            f"<../_notebooks/{name}>`, or run it in JupyterLab with "
            f"`make lab`.\n:::\n")


def site_notebook(path, root, found):
    """The chapter for the site: the download link under its title, links
    to repository files pointed at pages of the site, alt text on figures."""
    nb = read_chapter(path)
    # The saved state of live widgets is only of use to a running kernel; the
    # site shows the interactive figures' HTML players instead.
    nb.metadata.pop("widgets", None)
    # cells tagged live-NAME show a figure that computes in the page
    live_figures.place(nb, found.get("live", ()), path.name)
    block, placed = download_block(path.name), False
    for cell in nb.cells:
        if cell.cell_type == "code":
            give_alt_text(cell, path.name)
        elif cell.cell_type == "markdown":
            cell.source = found["names"](
                rewrite_links(cell.source, root, found, page=path.stem))
            m = None if placed else re.search(r"^#[ \t].*$", cell.source, re.M)
            if m:
                tail = cell.source[m.end():].lstrip("\n")
                cell.source = (cell.source[:m.end()] + "\n\n" + block
                               + ("\n" + tail if tail else ""))
                placed = True
    if not placed:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(block))
    return nb


LINK = re.compile(r"(\]\()([^()\s]+)(\))")
SOURCE_SUFFIXES = {".py": "python", ".cl": "opencl"}


def slug(title):
    """GitHub-style heading anchor, as MyST makes it (myst_heading_anchors)."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def site_link(root, target, found, folder="chapters", page=""):
    """Where a relative link of a page in ``folder`` (chapters/, or "" for
    the landing page) should point on the site, or None.

    A chapter links to a sibling (its .md twin or .ipynb), to a work in
    references.bib (its bibliography entry), to a kernel (the appendix
    section) or to a library file (a generated source page, added to
    ``found["sources"]``); figures and everything else are left alone.
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
        where = found["cited"].setdefault(fragment, [])
        if page not in where:
            where.append(page)
        return f"#{CITE_TARGET}{fragment}"
    if re.fullmatch(r"chapters/[0-9][0-9]_[^/]*\.(md|ipynb)", rel):
        return (f"{up}chapters/" if not folder else "") + full.stem + (
            ".ipynb" + (f"#{fragment}" if fragment else ""))
    if re.fullmatch(r"kernels/[^/]+\.cl", rel):
        return f"{up}appendix/kernels.md#{slug(full.name)}"
    if full.suffix in SOURCE_SUFFIXES and full.stat().st_size < 200_000:
        found["sources"].add(rel)
        return f"{up}appendix/sources.md#{slug(rel)}"
    return None


def rewrite_links(text, root, found, folder="chapters", page=""):
    out, fence = [], None
    for line in text.splitlines(keepends=True):
        m = re.match(r"\s*(`{3,}|~{3,})", line)
        if m and (fence is None or m.group(1)[0] == fence[0]):
            fence = None if fence else m.group(1)
        if fence is None:
            line = LINK.sub(lambda m: m.group(1) + (
                site_link(root, m.group(2), found, folder, page) or m.group(2))
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


def benchmarks(root, found):
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if BENCH_START in text and BENCH_END in text:
        table = text.split(BENCH_START, 1)[1].split(BENCH_END, 1)[0].strip()
        # the README's links are relative to the repository's root
        table = rewrite_links(table, root, found, folder="")
        if table:
            return table  # it says which run each table comes from
    return ("*Benchmarks pending:* `make bench` measures netcl_lite against "
            "numpy, torch and tiktoken; the table appears here once the "
            "README holds it.")


def index_page(root, chapters, found):
    entries = []
    for path, nb in chapters:
        goals = learning_goals(nb) or "*Learning goals to come.*"
        indented = "\n".join(("   " + line) if line.strip() else ""
                             for line in goals.splitlines())
        entries.append(f"[{chapter_title(nb, path.stem)}](chapters/{path.name})"
                       f"\n:  {indented.lstrip()}\n")
    chapter_list = ("::::{container} chapter-list\n" + "\n".join(entries) + "::::"
                    if entries else "*The chapters are being written.*")
    template = (SITE / "index.template.md").read_text(encoding="utf-8")
    return (template.replace("{{ chapters }}", chapter_list)
            .replace("{{ benchmarks }}", benchmarks(root, found)))


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


def check_citations(root, cited):
    """A key missing from references.bib stops the build, naming the chapter."""
    import pybtex.database

    bib = root / BIB
    keys = set(pybtex.database.parse_file(str(bib)).entries) if bib.exists() else set()
    missing = [f"{page}: {key}" for key, pages in sorted(cited.items())
               if key not in keys for page in pages]
    if missing:
        raise SystemExit(f"citations not in {BIB}: " + ", ".join(missing))


def assemble(root, src, live=()):
    """Write every source file under src (only those that changed, so that
    Sphinx rereads only those); delete what is no longer there. Return the
    chapters. ``live`` names the live figures that can be shown."""
    # names: inline code naming a documented object -> a link to its entry
    found = {"sources": set(), "cited": {}, "live": set(live),
             "names": reference.Linker()}
    wanted, chapters = {}, []
    for path in chapter_notebooks(root):
        chapters.append((path, nbformat.read(path, as_version=4)))
        wanted[f"chapters/{path.name}"] = nbformat.writes(
            site_notebook(path, root, found))
        wanted[f"_notebooks/{path.name}"] = path.read_bytes()
    notation = root / "chapters" / "notation.md"
    if notation.exists():
        wanted["chapters/notation.md"] = rewrite_links(
            notation.read_text(encoding="utf-8"), root, found, page="notation")
    wanted["index.md"] = index_page(root, chapters, found)  # adds sources
    wanted.update(reference.site_pages(root, found["names"]))
    check_citations(root, found["cited"])
    for rel in found["sources"]:
        wanted[f"_repo/{rel}"] = (root / rel).read_bytes()
    wanted["appendix/sources.md"] = sources_page(found["sources"])
    wanted["appendix/bibliography.md"] = (SITE / "bibliography.md").read_bytes()
    # which chapters cite each work: site/conf.py lists them under the entry
    wanted["appendix/cited.json"] = json.dumps(found["cited"], sort_keys=True)
    for fig in sorted((root / "figures").glob("*")):
        if fig.is_file():
            wanted[f"figures/{fig.name}"] = fig.read_bytes()
    kernels = sorted((root / "kernels").glob("*.cl"))
    for k in kernels:
        wanted[f"appendix/kernels/{k.name}"] = k.read_bytes()
    wanted["appendix/kernels.md"] = kernels_page(kernels)

    for rel, data in wanted.items():
        data = data.encode("utf-8") if isinstance(data, str) else data
        path = src / rel
        if not path.exists() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    for path in src.rglob("*"):
        if path.is_file() and path.relative_to(src).as_posix() not in wanted:
            path.unlink()
    return [p for p, _ in chapters]


def stale_pages(html, src):
    """Pages of the last build whose source is gone (Sphinx keeps them)."""
    docs = {p.relative_to(src).with_suffix("").as_posix() for p in src.rglob("*")
            if p.suffix in (".md", ".ipynb")} | {"search", "genindex"}
    pages = (p.relative_to(html) for p in html.rglob("*.html"))
    return [p for p in pages if not p.parts[0].startswith("_")
            and p.with_suffix("").as_posix() not in docs]


def inputs_digest(root):
    h = hashlib.sha256()
    files = [*chapter_notebooks(root), root / "chapters" / "notation.md",
             root / "README.md", root / BIB,
             *sorted((root / "figures").glob("*")),
             *sorted((root / "kernels").glob("*.cl")),
             *sorted(p for p in SITE.rglob("*") if p.is_file()),
             pathlib.Path(__file__).resolve(), ROOT / "tools" / "plain_text.py",
             *reference.inputs(), *live_figures.inputs(), *live_model.inputs()]
    for f in files:
        if f.is_file():
            h.update(str(f).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def sphinx(builder, root, build_dir, out, doctrees, force=False):
    """Run sphinx-build on _build/site_src; SystemExit with its output if it
    fails. Return the warnings file."""
    warnings = build_dir / f"site-warnings-{builder}.log"
    cmd = [sys.executable, "-m", "sphinx", "-b", builder, "-q", "-c", str(SITE),
           "-d", str(doctrees), "-w", str(warnings), str(build_dir / "site_src"),
           str(out)] + (["-E"] if force else [])
    proc = subprocess.run(cmd, env=dict(os.environ, COURSE_ROOT=str(root)),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode:
        sys.stderr.write(proc.stdout)
        raise SystemExit(f"sphinx-build -b {builder} failed ({proc.returncode})")
    return warnings


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
        live = live_figures.prepare(root, build_dir)
        live = live_model.prepare(root, build_dir, live)  # chapter 09's model
        chapters = assemble(root, build_dir / "site_src", live)
        log(f"{len(chapters)} chapter notebook(s); running Sphinx")
        if html.exists() and stale_pages(html, build_dir / "site_src"):
            shutil.rmtree(html)  # start afresh: no page of a deleted source
        warnings = sphinx("html", root, build_dir, html, build_dir / "doctrees",
                          force=force)
        live_figures.install(build_dir, html)
        live_model.install(build_dir, html)
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
