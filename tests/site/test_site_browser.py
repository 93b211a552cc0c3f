"""The static course in a real browser with the network cut.

Every page of _build/html is opened in headless Chromium over a loopback
HTTP server; any request to another host is aborted and counts as a failure.
On every page: no script errors, every image loaded, math typeset by the
vendored MathJax (no raw LaTeX left in the text), nothing tried to leave.

Screenshots go to a temporary folder; UPDATE_SCREENSHOTS=1 writes them to
docs/screenshots/ (the ones the README shows).
"""

import json
import os
import pathlib
import re
import urllib.parse
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOT = pathlib.Path(os.environ.get("COURSE_SITE_ROOT", REPO)).resolve()

# TeX left in the visible text (code blocks and typeset math removed first).
RAW_TEX = re.compile(r"\$\$|\\[()\[\]]|\\[A-Za-z]{2,}")

VISIBLE_TEXT = """() => {
  const clone = document.body.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, textarea, mjx-container,'
      + ' .highlight, .headerlink').forEach(e => e.remove());
  return clone.textContent;
}"""

IMAGES = """async () => {
  const imgs = [...document.images];
  for (const img of imgs) {
    img.loading = 'eager';
    if (!img.complete) await new Promise(done => {
      img.addEventListener('load', done);
      img.addEventListener('error', done);
      setTimeout(done, 5000);
    });
  }
  return imgs.map(i => ({src: i.currentSrc || i.src, width: i.naturalWidth,
                         alt: i.getAttribute('alt') || ''}));
}"""

# Blocks wider than their box: cell outputs (which should wrap) and display
# math (which course.js scales down to fit).
OVERFLOW = """() => {
  const wide = sel => [...document.querySelectorAll(sel)]
    .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.textContent.trim().slice(0, 60));
  return {outputs: wide('div.cell_output pre, div.output pre'),
          math: wide('div.math')};
}"""

# The texts a page shows for titles: the tab, the sidebar, previous/next.
TITLES = """() => [document.title,
  ...[...document.querySelectorAll('.sidebar-tree a, .related-pages .title')]
     .map(e => e.textContent.trim())]"""

LINKS = """() => [...document.querySelectorAll('a[href]')].map(a => a.href)"""

NAVIGATION = """() => {
  const href = sel => [...document.querySelectorAll(sel)].map(a => a.href);
  return {prev: href('.related-pages a.prev-page'),
          next: href('.related-pages a.next-page'),
          download: href('.notebook-download a')};
}"""

MATH = """() => {
  const math = [...document.querySelectorAll('span.math, div.math')];
  return {
    elements: math.length,
    untypeset: math.filter(e => !e.querySelector('mjx-container'))
                   .map(e => e.textContent.slice(0, 80)),
    containers: document.querySelectorAll('mjx-container').length,
    errors: [...document.querySelectorAll('mjx-merror')]
                .map(e => e.getAttribute('data-mjx-error') || e.textContent),
    mathjax: !!(window.MathJax && window.MathJax.version),
  };
}"""


def html_pages(site_html):
    return sorted(p.relative_to(site_html).as_posix()
                  for p in site_html.rglob("*.html")
                  if "_static" not in p.parts)


def visit(offline, url):
    """Open one page; return what the browser saw."""
    page = offline.context.new_page()
    errors, failed = [], []
    page.on("console", lambda m: errors.append(m.text)
            if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
            if r.status >= 400 else None)
    page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
    blocked_before = len(offline.blocked)
    page.goto(url, wait_until="load", timeout=30_000)
    if page.locator("span.math, div.math").count():
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise",
            timeout=20_000)
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
    report = {
        "url": url,
        "images": page.evaluate(IMAGES),
        "math": page.evaluate(MATH),
        "raw_tex": sorted(set(RAW_TEX.findall(page.evaluate(VISIBLE_TEXT)))),
        "links": page.evaluate(LINKS),
        "titles": page.evaluate(TITLES),
        "overflow": page.evaluate(OVERFLOW),
        "navigation": page.evaluate(NAVIGATION),
        "errors": errors,
        "failed": failed,
        "blocked": offline.blocked[blocked_before:],
    }
    return page, report


@pytest.fixture(scope="session")
def reports(site_html, site_url, offline):
    """Every page, visited once."""
    out = {}
    for rel in html_pages(site_html):
        page, report = visit(offline, site_url + rel)
        page.close()
        out[rel] = report
    return out


def test_every_page_opens_offline_and_renders(reports, site_chapters):
    assert "index.html" in reports
    # chapters/NN_*.html; chapters/notation.html is a page, not a notebook
    chapters = [r for r in reports if re.match(r"chapters/\d\d_", r)]
    assert len(chapters) == len(site_chapters)
    problems = []
    for rel, r in reports.items():
        if r["errors"]:
            problems.append(f"{rel}: script/console errors {r['errors']}")
        if r["failed"]:
            problems.append(f"{rel}: failed requests {r['failed']}")
        if r["blocked"]:
            problems.append(f"{rel}: tried to leave the machine {r['blocked']}")
        broken = [i["src"] for i in r["images"] if not i["width"]]
        if broken:
            problems.append(f"{rel}: images not loaded {broken}")
        m = r["math"]
        if m["elements"] and not (m["mathjax"] and m["containers"]):
            problems.append(f"{rel}: {m['elements']} math elements, no MathJax")
        if m["untypeset"]:
            problems.append(f"{rel}: math not typeset {m['untypeset'][:3]}")
        if m["errors"]:
            problems.append(f"{rel}: TeX errors {m['errors'][:3]}")
        if r["raw_tex"]:
            problems.append(f"{rel}: raw LaTeX in the text {r['raw_tex']}")
    assert not problems, "\n".join(problems)


def test_internal_links_resolve(reports, site_html, site_url):
    """Every link between pages (the sidebar, previous/next, the chapters'
    links to kernels and library files) reaches a file and an anchor."""
    ids = {}
    broken = set()
    for rel, r in reports.items():
        for href in r["links"]:
            if not href.startswith(site_url):
                continue
            path, _, fragment = href[len(site_url):].partition("#")
            path = urllib.parse.unquote(path.split("?")[0]) or "index.html"
            target = site_html / path
            if path.endswith("/"):
                target = target / "index.html"
            if not target.is_file():
                broken.add(f"{rel} -> {path}")
                continue
            if fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = set(re.findall(
                        r'id="([^"]+)"', target.read_text(encoding="utf-8")))
                if urllib.parse.unquote(fragment) not in ids[target]:
                    broken.add(f"{rel} -> {path}#{fragment}")
    assert not broken, "\n".join(sorted(broken))


def test_math_is_typeset_where_the_chapters_have_math(reports, site_chapters):
    for nb_path in site_chapters:
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        text = "".join("".join(c["source"]) for c in nb["cells"]
                       if c["cell_type"] == "markdown")
        if "$" in text:
            m = reports[f"chapters/{nb_path.stem}.html"]["math"]
            assert m["containers"] > 0, f"{nb_path.name}: math not typeset"


def test_landing_page_has_the_course_at_a_glance(site_url, offline,
                                                site_chapters):
    page = offline.context.new_page()
    page.goto(site_url + "index.html", wait_until="load")
    body = page.inner_text("article")
    for needle in ("What the course teaches", "For whom", "make course",
                   "make test", "make lab", "Chapters", "Benchmarks"):
        assert needle in body, needle
    nav = page.eval_on_selector_all(
        ".sidebar-tree a", "els => els.map(e => e.getAttribute('href'))")
    for nb in site_chapters:
        assert any(f"chapters/{nb.stem}.html" in h for h in nav), nb.name
        assert page.locator(
            f"article a[href*='chapters/{nb.stem}.html']").count(), nb.name
    assert any("appendix/kernels.html" in h for h in nav)
    assert page.locator("form.sidebar-search-container input").count()
    page.close()


def test_chapters_have_prev_next_and_a_notebook_download(
        reports, site_html, site_chapters):
    for nb in site_chapters:
        nav = reports[f"chapters/{nb.stem}.html"]["navigation"]
        assert nav["prev"] and nav["next"], f"{nb.name}: no previous/next link"
        (href,) = [h for h in nav["download"] if h.endswith("/" + nb.name)] or [
            pytest.fail(f"{nb.name}: no download link {nav['download']}")]
        with urllib.request.urlopen(href) as resp:
            downloaded = json.loads(resp.read())
        # the notebook as the build found it, byte for byte
        built = site_html.parent / "site_src" / "_notebooks" / nb.name
        assert downloaded == json.loads(built.read_text(encoding="utf-8"))
        assert downloaded["cells"][0]["source"][:1] == json.loads(
            nb.read_text(encoding="utf-8"))["cells"][0]["source"][:1]


def test_search_finds_the_kernels(site_url, offline):
    page = offline.context.new_page()
    page.goto(site_url + "search.html?q=kernel", wait_until="load")
    page.wait_for_function(
        "() => document.querySelectorAll('ul.search li').length > 0",
        timeout=15_000)
    page.close()


def test_kernel_appendix_shows_every_kernel_highlighted(site_url, offline):
    kernels = sorted((ROOT / "kernels").glob("*.cl"))
    page = offline.context.new_page()
    page.goto(site_url + "appendix/kernels.html", wait_until="load")
    blocks = page.locator("article div.highlight pre")
    assert blocks.count() == len(kernels) > 0
    for name in (k.name for k in kernels):
        assert page.get_by_role("heading", name=name).count(), name
    # highlighted: keywords and OpenCL qualifiers are styled spans
    assert page.locator("article div.highlight pre span.k").count()
    assert page.locator("article div.highlight pre span.kr").count()
    page.close()


def test_screenshots(site_url, offline, reports, tmp_path_factory):
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        out = REPO / "docs" / "screenshots"
        out.mkdir(parents=True, exist_ok=True)
    else:
        out = tmp_path_factory.mktemp("screenshots")
    chapters = [r for r in reports if r.startswith("chapters/")]
    # the chapter with the most typeset math among those with a figure
    best = max(chapters, default=None, key=lambda r: (
        bool(reports[r]["images"]), reports[r]["math"]["containers"]))
    shots = {"index.png": ("index.html", None),
             "index-chapters.png": ("index.html", "article section#chapters"),
             "kernels.png": ("appendix/kernels.html", None)}
    if best:
        shots["chapter.png"] = (best, None)
    page = offline.context.new_page()
    for name, (rel, anchor) in shots.items():
        page.goto(site_url + rel, wait_until="load")
        if page.locator("span.math, div.math").count():
            page.evaluate("() => MathJax.startup.promise.then(() => true)")
        if anchor and page.locator(anchor).count():
            page.locator(anchor).first.evaluate(
                "e => e.scrollIntoView({behavior: 'instant'})")
        page.screenshot(path=str(out / name))
        assert (out / name).stat().st_size > 10_000
    page.close()


def test_titles_show_no_tex(reports):
    bad = {rel: [t for t in r["titles"] if "\\" in t or "$" in t]
           for rel, r in reports.items()}
    bad = {rel: ts for rel, ts in bad.items() if ts}
    assert not bad, bad


def test_images_have_alt_text(reports):
    bad = [(rel, i["src"].rsplit("/", 1)[-1], i["alt"])
           for rel, r in reports.items() for i in r["images"]
           if len(i["alt"].strip()) < 12 or "_images/" in i["alt"]
           or re.search(r"\.(png|svg|jpe?g)$", i["alt"])]
    assert not bad, bad


def test_outputs_and_math_fit_the_desktop_page(reports):
    wide = {rel: r["overflow"] for rel, r in reports.items()
            if r["overflow"]["outputs"] or r["overflow"]["math"]}
    assert not wide, wide


def test_outputs_and_math_fit_a_phone(site_url, offline_phone, site_chapters):
    """At phone width no cell output needs sideways scrolling, and display
    math (chapter 04's row of matrices) is scaled to fit."""
    wide = {}
    for nb in site_chapters:
        page, _ = visit(offline_phone, f"{site_url}chapters/{nb.stem}.html")
        page.wait_for_timeout(200)  # course.js fits math after typesetting
        overflow = page.evaluate(OVERFLOW)
        page.close()
        if overflow["outputs"] or overflow["math"]:
            wide[nb.stem] = overflow
    assert not wide, wide


def test_search_works_from_disk(browser, site_html):
    """index.html opened as a file: the search page lists results with
    their summaries, and logs no error (it used to log a CORS error per
    result and show titles only)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    ctx.route("http*://**/*", lambda route: route.abort("blockedbyclient"))
    page = ctx.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text)
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.goto((site_html / "search.html").as_uri() + "?q=softmax",
              wait_until="load")
    page.wait_for_function(
        "() => document.querySelector('#search-results .search-summary')"
        " && /found/.test(document.querySelector('#search-results"
        " .search-summary').textContent)", timeout=20_000)
    page.wait_for_timeout(300)
    results = page.locator("ul.search li").count()
    summaries = page.locator("ul.search li p.context").all_inner_texts()
    ctx.close()
    assert results >= 5, results
    # every page result (not a section of the kernel appendix) has a summary
    assert len(summaries) >= results // 2, (results, summaries)
    assert not [s for s in summaries if RAW_TEX.search(s)], summaries
    assert not errors, errors


def test_figures_have_a_light_backdrop_in_dark_mode(browser, site_html, site_url):
    ctx = browser.new_context(viewport={"width": 1280, "height": 860},
                              color_scheme="dark")
    page = ctx.new_page()
    page.goto(site_url + "chapters/04_causal_attention_by_hand.html",
              wait_until="load")
    backdrops = page.eval_on_selector_all(
        "article img", "els => els.map(e => getComputedStyle(e).backgroundColor)")
    body = page.evaluate("getComputedStyle(document.body).backgroundColor")
    ctx.close()
    assert backdrops and all(b == "rgb(255, 255, 255)" for b in backdrops), (
        backdrops)
    assert body != "rgb(255, 255, 255)"  # the page itself is dark
