"""The reference and the concept pages in headless Chromium with the
network cut: each page loads with no console error and no request leaving
the machine, and a chapter's link to an entry lands on that entry, at the
desktop width and on a phone."""

import pathlib
import re
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import reference  # noqa: E402

PAGES = ([f"reference/{p}.html" for p in ["index", *(p for p, _, _ in reference.PACKAGES)]]
         + ["appendix/text.html", "appendix/transformer.html"])
ENTRY = "netcl_lite.text.BPETokenizer.from_pretrained"


def open_page(ctx, url):
    page = ctx.context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}")
            if r.status >= 400 else None)
    page.on("requestfailed", lambda r: errors.append(f"failed {r.url}"))
    page.goto(url, wait_until="load", timeout=30_000)
    return page, errors


@pytest.mark.parametrize("rel", PAGES)
def test_reference_page_loads_offline(site_url, offline, rel):
    blocked = len(offline.blocked)
    page, errors = open_page(offline, site_url + rel)
    try:
        entries = page.locator("dl.py > dt[id]").count()
        title = page.title()
    finally:
        page.close()
    assert not errors, errors
    assert offline.blocked[blocked:] == []
    if rel.startswith("reference/") and not rel.endswith("index.html"):
        assert entries > 0, f"{rel}: no entries"
    assert "Tokens & Attention" in title


def land_on_entry(ctx, site_url):
    """Click chapter 01's link to ``from_pretrained``; where does it land?"""
    page, errors = open_page(ctx, site_url + "chapters/01_byte_level_bpe.html")
    try:
        link = page.locator(f'article a[href$="reference/text.html#{ENTRY}"]').first
        assert link.count(), "chapter 01 has no link to the entry"
        link.scroll_into_view_if_needed()
        with page.expect_navigation():
            link.click()
        page.wait_for_load_state("load")
        # the theme scrolls smoothly to the fragment: wait until it is there
        try:
            page.wait_for_function("""id => {
              const e = document.getElementById(id);
              const top = e && e.getBoundingClientRect().top;
              return e && top >= 0 && top < innerHeight / 2;
            }""", arg=ENTRY, timeout=10_000)
        except Exception:  # noqa: BLE001  the assertions below say where it is
            pass
        where = page.evaluate("""id => {
          const e = document.getElementById(id);
          if (!e) return null;
          const r = e.getBoundingClientRect();
          return {top: r.top, bottom: r.bottom, height: innerHeight,
                  target: e.matches(':target'), text: e.textContent};
        }""", ENTRY)
        return page.url, where, errors
    finally:
        page.close()


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_chapter_link_lands_on_its_entry(site_url, offline, offline_phone, width):
    ctx = offline if width == "desktop" else offline_phone
    url, where, errors = land_on_entry(ctx, site_url)
    assert url.endswith(f"reference/text.html#{ENTRY}"), url
    assert where is not None, "no element with the entry's id"
    assert where["target"]
    assert 0 <= where["top"] < where["height"] / 2, where  # at the top of the view
    assert re.search(r"from_pretrained\s*\(", where["text"]), where["text"][:80]
    assert not errors, errors


def test_reference_pages_fit_a_phone(site_url, offline_phone):
    """No entry is wider than a phone's page: long signatures wrap and
    long code scrolls inside its own box."""
    wide = {}
    for rel in PAGES:
        page, _ = open_page(offline_phone, site_url + rel)
        try:
            wide[rel] = page.evaluate("""() => {
              const root = document.documentElement;
              return root.scrollWidth - root.clientWidth;
            }""")
        finally:
            page.close()
    assert all(v <= 1 for v in wide.values()), wide
