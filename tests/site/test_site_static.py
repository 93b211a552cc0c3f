"""The built course without a browser: every page is there, and nothing in
the HTML, CSS or JavaScript points a browser at another host. (The browser
test, test_site_browser.py, checks the same with the network cut.)"""

import re

import pytest

# What would make a browser fetch from the network when a page is shown.
REMOTE = [
    re.compile(r"""<script[^>]+src=["'](?:https?:)?//""", re.I),
    re.compile(r"""<link[^>]+href=["'](?:https?:)?//[^"']+["'][^>]*"""
               r"""rel=["']?(?:stylesheet|preload|icon|modulepreload)""", re.I),
    re.compile(r"""<link[^>]+rel=["']?(?:stylesheet|preload|icon|"""
               r"""modulepreload)["']?[^>]+href=["'](?:https?:)?//""", re.I),
    re.compile(r"""<(?:img|iframe|source|video|audio)[^>]+src=["']"""
               r"""(?:https?:)?//""", re.I),
    re.compile(r"""url\(\s*["']?(?:https?:)?//""", re.I),
    re.compile(r"""@import\s+["'](?:https?:)?//""", re.I),
]


def test_every_chapter_and_appendix_page_is_built(site_html, site_chapters):
    assert (site_html / "index.html").is_file()
    for nb in site_chapters:
        assert (site_html / "chapters" / f"{nb.stem}.html").is_file(), nb.name
    for page in ("chapters/notation.html", "appendix/kernels.html",
                 "appendix/sources.html",
                 "search.html", "searchindex.js",
                 "_static/mathjax/tex-chtml.js"):
        assert (site_html / page).is_file(), page


def test_nothing_is_loaded_from_another_host(site_html):
    offenders = []
    for path in sorted(site_html.rglob("*")):
        if path.suffix not in (".html", ".css") or "mathjax" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in REMOTE:
            for m in pattern.finditer(text):
                offenders.append(f"{path.relative_to(site_html)}: "
                                 f"{m.group(0)[:120]}")
    assert not offenders, "\n".join(offenders)


def test_pages_load_the_vendored_mathjax(site_html):
    index = (site_html / "index.html").read_text(encoding="utf-8")
    assert 'src="_static/mathjax/tex-chtml.js' in index
    assert "cdn.jsdelivr" not in index and "mathjax@" not in index


# --- what a reader sees: titles, alt text, commands, sources -----------------

import html as html_lib  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
TEX = re.compile(r"\\|\$")


def _pages(site_html):
    return sorted(p for p in site_html.rglob("*.html") if "_static" not in p.parts)


def test_titles_sidebar_and_search_index_hold_no_tex(site_html):
    """Page titles, the sidebar's entries and the search index's titles are
    plain text: a tab or a search result cannot typeset $1/\\sqrt{d_k}$."""
    problems = []
    for page in _pages(site_html):
        text = page.read_text(encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", text, re.S).group(1)
        if TEX.search(html_lib.unescape(title)):
            problems.append(f"{page.name}: <title> {title}")
        tree = text.split('class="sidebar-tree"', 1)[-1].split("</nav>", 1)[0]
        for entry in re.findall(r'class="reference internal"[^>]*>(.*?)</a>',
                                tree, re.S):
            if TEX.search(html_lib.unescape(re.sub(r"<[^>]+>", "", entry))):
                problems.append(f"{page.name}: sidebar entry {entry[:80]}")
    index = (site_html / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(index[index.index("(") + 1:index.rindex(")")])
    titles = list(data["titles"]) + list(data.get("alltitles", {}))
    problems += [f"search index title {t!r}" for t in titles if TEX.search(t)]
    assert not problems, "\n".join(problems)


def test_chapter_03_title_reads_as_text(site_html):
    page = next(site_html.glob("chapters/03_*.html")).read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "1/√dₖ" in html_lib.unescape(title), title


def test_every_image_has_meaningful_alt_text(site_html):
    """No alt text that is empty or a (hash) file name."""
    problems = []
    for page in _pages(site_html):
        for tag in re.findall(r"<img\b[^>]*>", page.read_text(encoding="utf-8")):
            m = re.search(r'\balt="([^"]*)"', tag)
            alt = html_lib.unescape(m.group(1)).strip() if m else ""
            if (len(alt) < 12 or re.search(r"\.(png|svg|jpe?g|gif)\b", alt, re.I)
                    or "/" in alt.split()[0] or re.search(r"[0-9a-f]{16}", alt)):
                problems.append(f"{page.relative_to(site_html)}: {tag[:160]}")
    assert not problems, "\n".join(problems)


def test_figure_alt_text_comes_from_the_plot(tool):
    b = tool("build_site")
    src = ('ax.set_title(f"Same {n:,} adds")\nax.set_xlabel(r"$d_k$")\n'
           'ax.plot(x, y, label="device")\n')
    assert b.figure_alt(src) == ("Plot: Same … adds. x axis: dₖ. "
                                 "Series: device.")
    assert b.tex_to_text(r"\mathbf{W}_O \in \mathbb{R}^{d \times d}") == (
        "W_O ∈ R^(d × d)")


def test_index_commands_do_not_look_like_output(site_html):
    """The landing page's command blocks are highlighted as commands: no
    console lexer, whose unprompted lines are styled as program output."""
    index = (site_html / "index.html").read_text(encoding="utf-8")
    assert "highlight-console" not in index
    blocks = re.findall(r'<div class="highlight-(\w+) notranslate">'
                        r'<div class="highlight"><pre>(.*?)</pre>', index, re.S)
    commands = [(lang, body) for lang, body in blocks if "make" in body]
    assert len(commands) >= 2
    for lang, body in commands:
        assert lang in ("bash", "shell", "sh"), lang
        assert 'class="go"' not in body  # Generic.Output
        assert re.search(r'<span class="c1?">#', body)  # comments are comments


def test_search_page_carries_every_page_for_summaries(site_html):
    search = (site_html / "search.html").read_text(encoding="utf-8")
    assert "_static/search-pages.js" in search
    assert "_static/search-offline.js" in search
    text = (site_html / "_static" / "search-pages.js").read_text(encoding="utf-8")
    pages = json.loads(text[text.index("=") + 1:].strip().rstrip(";"))
    for page in _pages(site_html):
        rel = page.relative_to(site_html).as_posix()
        # _modules/: viewcode's source pages, which search never returns
        if rel not in ("search.html", "genindex.html") and not rel.startswith(
                "_modules/"):
            assert rel in pages, rel
    # math reads as text in the summaries (TeX stays only inside code)
    assert not [p for p, html in pages.items() if re.search(r"\\\(|\\\[", html)]
    assert "√dₖ before the softmax" in pages["chapters/03_scaling_factor.html"]


# --- sources -----------------------------------------------------------------

# (key, year, a word of the title) for the works the course must cite
REQUIRED_SOURCES = [
    ("gage1994", "1994", "Compression"), ("sennrich2016", "2016", "Subword"),
    ("radford2019", "2019", "Multitask"), ("bahdanau2015", "2015", "Align"),
    ("vaswani2017", "2017", "Attention"), ("shazeer2019", "2019", "Write-Head"),
    ("ainslie2023", "2023", "GQA"), ("su2021", "2021", "RoFormer"),
    ("milakov2018", "2018", "softmax"), ("dao2022", "2022", "FlashAttention"),
    ("zhang2019", "2019", "Root Mean Square"), ("shazeer2020", "2020", "GLU"),
    ("loshchilov2019", "2019", "Weight Decay"), ("elhage2021", "2021", "Circuits"),
    ("olsson2022", "2022", "Induction"), ("chen2023", "2023", "Interpolation"),
    ("bloc972023", "2023", "NTK"), ("kazemnejad2023", "2023", "Length"),
]


# a citation: [Authors (year)](../references.bib#KEY)
CITATION = re.compile(r"\[([^\]]+)\]\((?:\.\./)?references\.bib#([^)\s]+)\)")


def _bib():
    import pybtex.database

    return pybtex.database.parse_file(str(REPO / "references.bib")).entries


def _chapter_markdown(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [("".join(c["source"]) if isinstance(c["source"], list)
             else c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def test_bibliography_holds_the_required_sources():
    entries = _bib()
    for key, year, word in REQUIRED_SOURCES:
        assert key in entries, key
        assert entries[key].fields["year"] == year, key
        assert word.lower() in entries[key].fields["title"].lower(), key
        assert entries[key].persons.get("author"), key


def test_every_chapter_ends_with_further_reading(site_chapters):
    """Chapters 00-89 end with "Further reading"; an appendix chapter (90+)
    that has one is held to the same form."""
    entries = _bib()
    cited_anywhere = set()
    for path in site_chapters:
        if int(path.name[:2]) >= 90 and not any(
                "## Further reading" in t for t in _chapter_markdown(path)):
            continue
        text = "\n".join(_chapter_markdown(path))
        headings = re.findall(r"^(#{1,2}) (.+)$", text, re.M)
        assert headings[-1] == ("##", "Further reading"), (
            f"{path.name}: last section is {headings[-1]}")
        section = text.rsplit("## Further reading", 1)[1]
        citations = CITATION.findall(section)
        keys = [key for _, key in citations]
        assert keys, f"{path.name}: Further reading cites nothing"
        missing = [k for k in keys if k not in entries]
        assert not missing, f"{path.name}: not in references.bib: {missing}"
        # each citation shows authors and year as its link text, which is
        # what JupyterLab shows
        for text_, key in citations:
            assert entries[key].fields["year"] in text_, (path.name, text_)
        cited_anywhere.update(keys)
    by_number = {p.name[:2] for p in site_chapters}
    if {f"{n:02d}" for n in range(10)} <= by_number:
        for key, _, _ in REQUIRED_SOURCES[:13]:  # those chapters 00-09 rely on
            assert key in cited_anywhere, f"{key} is cited by no chapter"


def test_bibliography_page_and_citation_links(site_html, site_chapters):
    page = (site_html / "appendix" / "bibliography.html").read_text(
        encoding="utf-8")
    for key in _bib():
        assert f'id="ref-{key}"' in page, key
    for path in site_chapters:
        citations = CITATION.findall("\n".join(_chapter_markdown(path)))
        if not citations:
            continue
        html = (site_html / "chapters" / f"{path.stem}.html").read_text(
            encoding="utf-8")
        links = dict(re.findall(r'href="[^"]*bibliography\.html#ref-([^"]+)"'
                                r'>(.*?)</a>', html, re.S))
        assert links, f"{path.stem}: no citation links to the bibliography"
        assert "references.bib" not in html.split("Further reading", 1)[-1]
        for text_, key in citations:  # the chapter's own words link to it
            shown = re.sub(r"<[^>]+>|\s+", " ", links.get(key, "")).split()
            assert shown == text_.split(), (path.stem, key, links.get(key))
        # and the entry links back to the chapter
        entry = page.split(f'id="ref-{citations[0][1]}"', 1)[1].split("</li>")[0]
        assert "Cited in" in entry and f"{path.stem}.html" in entry, entry


def test_progress_bars_are_stored_as_one_line(tool, site_chapters):
    """A progress bar in a stored notebook is a few redraws, not one per
    step (chapter 09 once stored 28); chapter 09's training bar is its start
    and its end, which Jupyter and the site show as one line."""
    b = tool("build_site")
    for path in site_chapters:
        nb = json.loads(path.read_text(encoding="utf-8"))
        shown_nb = b.read_chapter(path)  # as Jupyter and the site show it
        for i, cell in enumerate(nb["cells"]):
            text = "".join("".join(o.get("text", "")) for o in
                           cell.get("outputs", [])
                           if o.get("output_type") == "stream")
            limit = 2 if path.name.startswith("09_") else 4
            assert text.count("\r") <= limit, (
                f"{path.name} cell {i}: {text.count(chr(13))} redraws stored")
            if path.name.startswith("09_") and "training:" in text:
                shown = "".join(o.get("text", "") for o in
                                shown_nb.cells[i].outputs)
                assert shown.count("training:") == 1, shown


# Sphinx's smart quotes turn a straight quote into a curly one by the
# characters beside it, which goes wrong for a token such as " return" or a
# string such as "\ud800" written as prose: the reader sees ” return” or
# ”ud800”. Such strings belong in code, where quotes stay straight.
WRONG_WAY = re.compile(r"(?:^|[\s(\[])[”’](?=\w)"     # a closing quote opens
                       r"|\w[“‘](?=$|[\s).,;:])"       # an opening one closes
                       r"|[“”‘’]{2}")                  # an empty quoted string


# Bold written **so** where the text is not parsed as markup (the
# reference shows docstrings as plain text: their stars stay stars).
BOLD_LEFT = re.compile(r"\*\*\w[^*\n]*\w\*\*")


def _shown_text(path):
    """A page's text as a reader sees it, outside code; code stands in as
    a word, so that `regex`'s reads as "code's"."""
    text = path.read_text(encoding="utf-8", errors="replace")
    text = re.sub(r"<(script|style|pre|code)\b.*?</\1>", "code", text,
                  flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", "", text))


@pytest.mark.parametrize("pattern", [WRONG_WAY, BOLD_LEFT],
                         ids=["quote turned the wrong way", "bold left as text"])
def test_no_markup_shows_wrong(site_html, pattern):
    found = []
    for path in sorted(site_html.rglob("*.html")):
        text = _shown_text(path)
        for m in pattern.finditer(text):
            where = text[max(m.start() - 40, 0):m.end() + 30].replace("\n", " ")
            found.append(f"{path.relative_to(site_html)}: ...{where}...")
    assert not found, "\n".join(found)
