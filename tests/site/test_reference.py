"""The built reference (tools/reference.py) and the two concept pages,
read from _build/html without a browser: every public name has an entry
with its signature, a link to its source and its file's worked example; the
chapters link to the entries; the concept pages link every chapter section
that treats their topics. (test_reference_browser.py opens them.)"""

import html
import importlib
import inspect
import json
import pathlib
import re
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import reference  # noqa: E402

ENTRY = re.compile(r'<dt class="sig sig-object py"[^>]*\bid="([^"]+)"[^>]*>(.*?)</dt>',
                   re.S)
HREF = re.compile(r'<a\b[^>]*\bhref="([^"]*)"')


def entries(site_html, page):
    text = (site_html / "reference" / f"{page}.html").read_text(encoding="utf-8")
    return {m.group(1): m.group(2) for m in ENTRY.finditer(text)}


def public(page):
    _, package, modules = next(p for p in reference.PACKAGES if p[0] == page)
    for _, names in reference.public_names(package, modules):
        for where, name in names:
            yield where, name, getattr(importlib.import_module(where), name)


@pytest.mark.parametrize("page", [p for p, _, _ in reference.PACKAGES])
def test_every_public_name_has_an_entry_with_its_signature(site_html, page):
    found = entries(site_html, page)
    problems = []
    for where, name, obj in public(page):
        dt = found.get(f"{where}.{name}")
        if dt is None:
            problems.append(f"{where}.{name}: no entry")
            continue
        if f'<span class="pre">{name}</span>' not in dt:
            problems.append(f"{where}.{name}: its name is not in the signature")
        if not callable(obj):
            continue
        if "viewcode-link" not in dt:
            problems.append(f"{where}.{name}: no link to its source")
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            params = {}
        # a function shows its parentheses, a class when it takes arguments
        if (params or not inspect.isclass(obj)) and 'class="sig-paren"' not in dt:
            problems.append(f"{where}.{name}: no parameters")
        shown = re.sub(r"<[^>]+>", "", dt)
        absent = [p for p in params if p not in shown]
        if absent:
            problems.append(f"{where}.{name}: parameters {absent} not shown")
    assert not problems, "\n".join(problems)


def test_a_class_entry_holds_its_methods(site_html):
    found = entries(site_html, "text")
    for method in ("train_from_iterator", "encode", "decode", "from_pretrained",
                   "save_tokenizer_json"):
        dt = found[f"netcl_lite.text.BPETokenizer.{method}"]
        assert "viewcode-link" in dt, method
    sig = re.sub(r"<[^>]+>", "", found["netcl_lite.text.BPETokenizer.train_from_iterator"])
    assert "texts" in sig and "vocab_size" in sig, sig


def test_reference_pages_show_the_worked_examples_and_chapters(site_html):
    text = (site_html / "reference" / "functional.html").read_text(encoding="utf-8")
    assert text.count('class="highlight-pycon') + text.count("doctest") >= 10
    assert "F.swiglu(a, b)" in html.unescape(re.sub(r"<[^>]+>", "", text))
    # "chapter 09" in swiglu.py's docstring is a link to chapter 09
    assert 'href="../chapters/09_train_a_decoder.html"' in text
    nn = (site_html / "reference" / "nn.html").read_text(encoding="utf-8")
    assert 'href="../chapters/09_train_a_decoder.html"' in nn
    # the source pages exist and link back
    source = site_html / "_modules" / "netcl_lite" / "functional" / "swiglu.html"
    assert source.is_file()
    assert "reference/functional.html#netcl_lite.functional.swiglu" in source.read_text(
        encoding="utf-8")


def test_the_index_lists_every_package_page(site_html):
    text = (site_html / "reference" / "index.html").read_text(encoding="utf-8")
    for page, package, _ in reference.PACKAGES:
        assert f'href="{page}.html"' in text, page
    assert "A first program" in text


def chapter_links(site_html):
    """{chapter page: [(href, target page, fragment)] into the reference}."""
    out = {}
    for path in sorted((site_html / "chapters").glob("[0-9][0-9]_*.html")):
        text = path.read_text(encoding="utf-8")
        article = re.search(r'<article[^>]*role="main".*?</article>', text, re.S)
        links = []
        for href in HREF.findall(article.group(0)):
            m = re.match(r"\.\./reference/(\w+)\.html#(.+)$", href)
            if m:
                links.append((href, m.group(1), m.group(2)))
        out[path.name] = links
    return out


def test_chapters_link_to_the_entries_they_call(site_html):
    links = chapter_links(site_html)
    ids = {}
    broken = []
    for chapter, hrefs in links.items():
        for href, page, fragment in hrefs:
            if page not in ids:
                ids[page] = set(re.findall(r'id="([^"]+)"', (
                    site_html / "reference" / f"{page}.html").read_text(
                        encoding="utf-8")))
            if fragment not in ids[page]:
                broken.append(f"{chapter}: {href}")
    assert not broken, broken
    first = {f for _, _, f in links["01_byte_level_bpe.html"]}
    assert "netcl_lite.text.BPETokenizer.from_pretrained" in first
    assert "netcl_lite.text.ChatFormat" in first
    decoder = {f for _, _, f in links["09_train_a_decoder.html"]}
    assert "netcl_lite.nn.FusedDecoder" in decoder
    assert sum(len(v) for v in links.values()) >= 50


# --- the concept pages --------------------------------------------------------

CONCEPTS = {
    # page: (its title, as the document names it; headings that treat its
    # topics, in any chapter; entries it must link)
    "text": ("Text API Reference: tokenizer training, regex splitting, and chat "
             "templating",
             re.compile(r"\bsplit|special token|chat|vocabular|\bBPE\b|tokeniz|"
                        r"train_from|merge", re.I),
             ["netcl_lite.text.BPETokenizer.train_from_iterator",
              "netcl_lite.text.GPT4_SPLIT_PATTERN",
              "netcl_lite.text.BPETokenizer.register_special_tokens",
              "netcl_lite.text.ChatFormat.encode_dialog",
              "netcl_lite.text.BPETokenizer.from_pretrained"]),
    "transformer": ("Concepts: Transformer: decoder blocks, SwiGLU feed-forward "
                    "networks, and KV-cache",
                    re.compile(r"\bdecoder\b|SwiGLU|feed-forward|\bKV\b|\bcache\b|"
                               r"fused decod|generat", re.I),
                    ["netcl_lite.nn.DecoderBlock", "netcl_lite.nn.SwiGLU",
                     "netcl_lite.functional.swiglu", "netcl_lite.nn.KVCache",
                     "netcl_lite.nn.FusedDecoder"]),
}


SECTION = re.compile(r'<section id="([^"]+)">\s*((?:<span id="[^"]+"></span>\s*)*)'
                     r'<h[23]>(.*?)<a class="headerlink"', re.S)


def chapter_sections(site_html):
    """[(chapter page, anchor, heading text)] of every ##/### section, once
    per id it has (the section's, and MyST's heading anchor)."""
    out = []
    for path in sorted((site_html / "chapters").glob("[0-9][0-9]_*.html")):
        text = path.read_text(encoding="utf-8")
        for m in SECTION.finditer(text):
            heading = html.unescape(re.sub(r"<[^>]+>", "", m.group(3))).strip()
            for anchor in [m.group(1), *re.findall(r'id="([^"]+)"', m.group(2))]:
                out.append((path.name, anchor, heading))
    return out


@pytest.mark.parametrize("page", sorted(CONCEPTS))
def test_concept_page_maps_every_section_on_its_topics(site_html, page):
    title, topic, wanted = CONCEPTS[page]
    text = (site_html / "appendix" / f"{page}.html").read_text(encoding="utf-8")
    h1 = re.search(r"<h1>(.*?)<a class=\"headerlink\"", text, re.S).group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", h1)).strip() == title
    article = re.search(r'<article[^>]*role="main".*?</article>', text, re.S).group(0)
    hrefs = HREF.findall(article)
    linked = set()
    for href in hrefs:
        m = re.match(r"\.\./chapters/(\d\d_\w+\.html)#(.+)$", href)
        if m:
            linked.add((m.group(1), m.group(2)))
    sections = chapter_sections(site_html)
    anchors = {(c, a) for c, a, _ in sections}
    assert linked and linked <= anchors, sorted(linked - anchors)
    skip = ("Learning goals", "Summary", "Exercises", "Further reading")
    reached = {(c, h) for c, a, h in sections if (c, a) in linked}
    missed = sorted({f"{c} · {h}" for c, a, h in sections
                     if topic.search(h) and h not in skip and (c, h) not in reached})
    assert not missed, f"{page}: sections not on the map: {missed}"
    entries = {h.split("#", 1)[1] for h in hrefs if "../reference/" in h and "#" in h}
    assert set(wanted) <= entries, sorted(set(wanted) - entries)
    assert len(entries) >= 10


def test_concept_pages_are_in_the_appendix(site_html):
    text = (site_html / "index.html").read_text(encoding="utf-8")
    for page in CONCEPTS:
        assert f'href="appendix/{page}.html"' in text, page


def test_every_chapter_section_a_concept_page_names_exists(site_html):
    """The maps' links are written by hand: each must still reach a heading
    (a renamed section breaks it here, and in the browser test)."""
    anchors = {(c, a) for c, a, _ in chapter_sections(site_html)}
    for page in CONCEPTS:
        source = (REPO / "site" / "concepts" / f"{page}.md").read_text(encoding="utf-8")
        for chapter, anchor in re.findall(
                r"\]\(\.\./chapters/(\d\d_\w+)\.ipynb#([\w-]+)\)", source):
            assert (f"{chapter}.html", anchor) in anchors, f"{page}: {chapter}#{anchor}"


def test_the_site_holds_the_reference_in_its_search_index(site_html):
    text = (site_html / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(text[text.index("(") + 1:text.rindex(")")])
    assert "train_from_iterator" in json.dumps(data["objects"])


@pytest.mark.parametrize("page", [p for p, _, _ in reference.PACKAGES])
def test_docstrings_render_without_broken_markup(site_html, page):
    """A docstring is plain text: a lone star (``kernels/*.cl``) or a bar
    must not turn into reST markup that docutils flags as problematic."""
    text = (site_html / "reference" / f"{page}.html").read_text(encoding="utf-8")
    broken = re.findall(r'class="problematic"[^>]*>([^<]*)<', text)
    assert not broken, f"reference/{page}.html: problematic markup {broken}"
