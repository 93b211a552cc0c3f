"""The built course without a browser: every page is there, and nothing in
the HTML, CSS or JavaScript points a browser at another host. (The browser
test, test_site_browser.py, checks the same with the network cut.)"""

import re

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
