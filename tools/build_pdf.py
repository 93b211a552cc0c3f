"""The whole course as one PDF: ``python tools/build_pdf.py`` -> _build/course.pdf

1. Assembles the site's sources (tools/build_site.py) and builds them with
   Sphinx's ``singlehtml`` builder: the landing page, every chapter (stored
   outputs, figures) and the appendices, one after another in one page.
2. Opens that page in headless Chromium (playwright, the browser the site's
   tests drive), waits until MathJax has typeset every formula, starts each
   chapter on a new page and prints it to PDF, with a bookmark outline and
   page numbers.

Nothing is fetched when the page is printed: MathJax is the copy that
sphinx-mathjax-offline puts in the site. CHROMIUM names the browser (default
/usr/bin/chromium).
"""

import argparse
import hashlib
import os
import pathlib
import shutil
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import build_site as site  # noqa: E402  (the sources, and the HTML build)

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--no-first-run"]

# Before printing: each document of the single page (Sphinx marks its start
# with <span id="document-NAME">) begins a new sheet, except the first.
PAGE_BREAKS = """() => {
  const starts = [...document.querySelectorAll('span[id^="document-"]')];
  starts.slice(1).forEach(s => {
    const next = s.nextElementSibling || s.parentElement;
    next.classList.add('course-document');
  });
  return starts.map(s => s.id.slice('document-'.length));
}"""

FOOTER = ('<div style="font-size:8px;width:100%;text-align:center;'
          'color:#666"><span class="title"></span> · '
          '<span class="pageNumber"></span> / <span class="totalPages">'
          '</span></div>')


def single_page(root, build_dir):
    """Build the course as one HTML page; return its path."""
    build_dir.mkdir(parents=True, exist_ok=True)
    # the sources folder is the HTML build's: one build at a time
    with open(build_dir / ".site-build.lock", "w") as lock:
        if site.fcntl:
            site.fcntl.flock(lock, site.fcntl.LOCK_EX)
        site.assemble(root, build_dir / "site_src")
        out = build_dir / "singlehtml"
        site.sphinx("singlehtml", root, build_dir, out,
                    build_dir / "doctrees-single")
    return out / "index.html"


def print_pdf(page_html, pdf, browser=None):
    """Print one HTML page to PDF with headless Chromium (a playwright
    browser, or one launched here); return the names of the documents it
    holds, in order."""
    if browser is None:
        if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
            raise SystemExit(f"no Chromium at {CHROMIUM}: install Debian's "
                             "chromium (apt-get install chromium) or set "
                             "CHROMIUM to a Chromium binary")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM,
                                         headless=True, args=CHROMIUM_ARGS)
            try:
                return print_pdf(page_html, pdf, browser)
            finally:
                browser.close()
    context = browser.new_context(viewport={"width": 1000, "height": 1400})
    try:
        page = context.new_page()
        # the page may only read its own files
        page.route("http*://**/*", lambda route: route.abort("blockedbyclient"))
        page.goto(page_html.as_uri(), wait_until="load", timeout=120_000)
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise",
            timeout=60_000)
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
        errors = page.evaluate("() => document.querySelectorAll"
                               "('mjx-merror').length")
        if errors:
            raise SystemExit(f"{errors} formula(s) failed to typeset")
        documents = page.evaluate(PAGE_BREAKS)
        page.emulate_media(media="print")
        pdf.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(path=str(pdf), format="A4", print_background=True,
                 margin={"top": "16mm", "bottom": "16mm", "left": "14mm",
                         "right": "14mm"},
                 display_header_footer=True, header_template="<span></span>",
                 footer_template=FOOTER, outline=True, tagged=True)
    finally:
        context.close()
    return documents


def build(root=ROOT, build_dir=None, pdf=None, browser=None, force=False):
    """Write the PDF (unless it is up to date); return its path."""
    root = pathlib.Path(root).resolve()
    build_dir = pathlib.Path(build_dir or root / "_build").resolve()
    pdf = pathlib.Path(pdf or build_dir / "course.pdf").resolve()
    digest = site.inputs_digest(root) + hashlib.sha256(
        pathlib.Path(__file__).read_bytes()).hexdigest()
    stamp = pdf.with_name(pdf.name + ".sha256")
    if (not force and pdf.exists() and stamp.exists()
            and stamp.read_text() == digest):
        print(f"[build_pdf] up to date: {pdf}", flush=True)
        return pdf
    stamp.unlink(missing_ok=True)
    start = time.perf_counter()
    page = single_page(root, build_dir)
    documents = print_pdf(page, pdf, browser)
    stamp.write_text(digest)
    print(f"[build_pdf] {len(documents)} documents, "
          f"{pdf.stat().st_size / 2**20:.1f} MiB, "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return pdf


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=ROOT, type=pathlib.Path,
                    help="tree holding chapters/, figures/, kernels/")
    ap.add_argument("--build", default=None, type=pathlib.Path,
                    help="build folder (default: ROOT/_build)")
    ap.add_argument("-o", "--output", default=None, type=pathlib.Path,
                    help="the PDF (default: BUILD/course.pdf)")
    ap.add_argument("--force", action="store_true", help="rebuild it")
    args = ap.parse_args(argv)
    pdf = build(args.root, args.build, args.output, force=args.force)
    print(f"The course as a PDF: {pdf}")


if __name__ == "__main__":
    main()
