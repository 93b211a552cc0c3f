"""`make pdf`: the whole course in one PDF, printed by headless Chromium.

Builds _build/course.pdf (tools/build_pdf.py) once per session, then reads
its text back with pypdf: every chapter is there with its title, its
figures are embedded, its math was typeset (no TeX source left) and its
code and stored outputs were printed.
"""

import json
import os
import pathlib
import re
import unicodedata

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOT = pathlib.Path(os.environ.get("COURSE_SITE_ROOT", REPO)).resolve()

pypdf = pytest.importorskip("pypdf")


@pytest.fixture(scope="session")
def course_pdf(tool, site_html, browser):
    """Printed with the session's Chromium (the browser fixture skips, or
    fails under COURSE_REQUIRE_BROWSER=1, when there is none)."""
    return tool("build_pdf").build(ROOT, ROOT / "_build", browser=browser)


@pytest.fixture(scope="session")
def pdf_pages(course_pdf):
    reader = pypdf.PdfReader(str(course_pdf))
    return reader, [page.extract_text() or "" for page in reader.pages]


def _squash(text):
    """No whitespace, ligatures spelled out (rooﬂine: NFKC), and Sphinx's
    smart quotes (machine’s) as typed."""
    text = unicodedata.normalize("NFKC", text).translate(str.maketrans("‘’“”", "''\"\""))
    return re.sub(r"\s+", "", text)


def _title(nb_path):
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            src = "".join(cell["source"])
            m = re.search(r"^# (.+)$", src, re.M)
            if m:
                return m.group(1)
    raise AssertionError(f"{nb_path.name}: no title")


def _outline(items):
    """The titles of a PDF's bookmarks, nested ones included."""
    for item in items:
        if isinstance(item, list):
            yield from _outline(item)
        else:
            yield item.title


def test_pdf_holds_every_chapter_in_order(tool, pdf_pages, site_chapters):
    _, pages = pdf_pages
    text = _squash("\n".join(pages))
    site = tool("build_site")
    where = []
    for nb in site_chapters:
        title = _squash(site.plain_heading(_title(nb)))
        # the heading, not the landing page's list of chapters: the last hit
        pos = text.rfind(title)
        assert pos >= 0, f"{nb.name}: title {title!r} not in the PDF"
        where.append(pos)
    assert where == sorted(where), "chapters out of order"


def test_pdf_has_a_bookmark_per_chapter(tool, pdf_pages, site_chapters):
    reader, _ = pdf_pages
    marks = [_squash(t) for t in _outline(reader.outline)]
    site = tool("build_site")
    for nb in site_chapters:
        title = _squash(site.plain_heading(_title(nb)))
        assert any(title in m for m in marks), f"{nb.name}: no bookmark"


def test_pdf_has_figures_math_code_and_outputs(pdf_pages, site_chapters):
    reader, pages = pdf_pages
    images = sum(len(page.images) for page in reader.pages)
    figures = sum(
        1 for nb in site_chapters
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for out in cell.get("outputs", [])
        if "image/png" in out.get("data", {}))
    assert images >= figures > 0
    text = "\n".join(pages)
    # math was typeset: MathJax's delimiters are gone (code keeps its TeX)
    assert "\\(" not in text and "\\[" not in text
    assert "import numpy as np" in text  # code cells
    assert "sigma at d_k = 128: 11.31" in text  # a stored output (chapter 03)
    assert len(reader.pages) > 10 * len(site_chapters) // 2


def test_pdf_holds_the_reference_and_the_concept_pages(pdf_pages):
    """The reference comes after the chapters, with its entries' signatures
    and worked examples; the two concept pages are in the appendix."""
    reader, pages = pdf_pages
    text = _squash("\n".join(pages))
    last_chapter = text.rfind(_squash("Appendix: tokenizer engineering"))
    for title in ("Text API Reference: tokenizer training, regex splitting, "
                  "and chat templating",
                  "Concepts: Transformer: decoder blocks, SwiGLU feed-forward "
                  "networks, and KV-cache",
                  "The netcl_lite API", "Text: netcl_lite.text",
                  "Ops: netcl_lite.functional", "Device and tensors: netcl_lite.core"):
        assert text.rfind(_squash(title)) > last_chapter > 0, title
    for signature in ("train_from_iterator(texts,", "scaled_dot_product_attention(q,k,v,",
                      "cosine_lr(step,", "player(draw,"):
        assert signature in text, signature
    # a worked example of a docstring, as a doctest
    assert _squash(">>> tok.train_from_iterator([") in text
    marks = [_squash(t) for t in _outline(reader.outline)]
    assert any("netcl_lite.text" in m for m in marks), marks[-20:]
