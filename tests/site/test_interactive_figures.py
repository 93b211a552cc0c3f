"""The interactive figures (netcl_lite.viz.player) in the built course.

Each chapter page with a player is opened from disk (file://, as a reader
opens _build/html/index.html) in headless Chromium with every network
request refused. Every control of every player is moved, with the mouse
API and with the keyboard, and each move must change the picture; no
console error may appear. Screenshots of each player, light and dark, go to
a temporary folder (PLAYER_SCREENSHOTS=DIR keeps them in DIR).
"""

import json
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOT = pathlib.Path(os.environ.get("COURSE_SITE_ROOT", REPO)).resolve()
# The chapters that must have at least one interactive figure.
REQUIRED = ("01", "03", "04", "06", "08")

STATE = """root => {
  const img = root.querySelector('img.nl-player-frame');
  return {src: img.getAttribute('src'), alt: img.alt,
          loaded: img.complete && img.naturalWidth > 0,
          outputs: [...root.querySelectorAll('output')].map(o => o.textContent)};
}"""

CONTROLS = """root => [...root.querySelectorAll('[data-axis]')].map(c => ({
  id: c.id, tag: c.tagName.toLowerCase(), type: c.type,
  label: c.labels.length ? c.labels[0].textContent.trim() : '',
  count: c.tagName === 'SELECT' ? c.options.length : Number(c.max) + 1,
  value: Number(c.value)}))"""


def live_in(nb_path):
    """Cells whose player the site replaces by a live figure (tagged
    live-NAME; tests/site/test_live_figures.py checks those)."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if any(
        t.startswith("live-") for t in c.get("metadata", {}).get("tags", []))]


def players_in(nb_path):
    """Ids of the players whose HTML the notebook stores and the site shows."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    ids = []
    for cell in nb["cells"]:
        if cell in live_in(nb_path):
            continue
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            if 'class="nl-player"' in html:
                ids.append(html.split('class="nl-player" id="', 1)[1].split('"')[0])
    return ids


@pytest.fixture(scope="module")
def pages(site_html, site_chapters):
    found = {nb.stem: players_in(nb) for nb in site_chapters}
    return {stem: ids for stem, ids in found.items() if ids}


@pytest.fixture(scope="module")
def live_pages(site_chapters):
    return {nb.stem for nb in site_chapters if live_in(nb)}


@pytest.fixture(scope="module")
def disk_context(browser):
    """A context that may open files and data: URLs, and nothing else."""
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  service_workers="block")
    refused = []

    def route(r):
        if r.request.url.split(":", 1)[0] in ("file", "data", "blob", "about"):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort("blockedbyclient")

    context.route("**/*", route)
    context.refused = refused
    yield context
    context.close()


def test_required_chapters_have_an_interactive_figure(pages, live_pages):
    """A player, or a live figure in its place."""
    for number in REQUIRED:
        assert any(stem.startswith(number + "_") for stem in [*pages, *live_pages]), (
            f"chapter {number}: no interactive figure")
    assert sum(len(ids) for ids in pages.values()) + len(live_pages) >= 6


def _move(page, control, state):
    """Every value of one control, by the mouse API then the keyboard; the
    picture must change when the value does."""
    sel = f"#{control['id']}"
    before = state()
    seen = {before["src"]}
    for k in range(control["count"]):
        if k == control["value"]:
            continue
        if control["tag"] == "select":
            page.select_option(sel, index=k)
        else:
            page.fill(sel, str(k))
        now = state()
        assert now["loaded"], f"{sel} = {k}: frame not loaded"
        assert now["alt"] != before["alt"], f"{sel} = {k}: alt text unchanged"
        seen.add(now["src"])
    assert len(seen) > 1, f"{sel}: no value changed the picture"
    # From the far end back to the start with the keyboard, step by step.
    far = control["count"] - 1 if control["value"] < control["count"] - 1 else 0
    if control["tag"] == "select":
        page.select_option(sel, index=far)
        key = "ArrowUp" if far > control["value"] else "ArrowDown"
    else:
        page.fill(sel, str(far))
        key = "ArrowLeft" if far > control["value"] else "ArrowRight"
    page.focus(sel)
    pictures = {state()["src"]}
    for _ in range(abs(far - control["value"])):
        alt = state()["alt"]
        page.keyboard.press(key)
        assert state()["alt"] != alt, f"{sel}: {key} did not move it"
        pictures.add(state()["src"])
    assert len(pictures) > 1, f"{sel}: keyboard moves did not change the picture"
    value = page.eval_on_selector(sel, "e => Number(e.value)")
    assert value == control["value"], f"{sel}: keyboard did not reach the start"
    assert state()["src"] == before["src"], f"{sel}: start frame not restored"


def test_every_control_changes_the_figure_offline(pages, site_html,
                                                  disk_context, tmp_path_factory):
    shots = pathlib.Path(os.environ.get("PLAYER_SCREENSHOTS") or
                         tmp_path_factory.mktemp("players"))
    shots.mkdir(parents=True, exist_ok=True)
    problems = []
    for stem, ids in pages.items():
        page = disk_context.new_page()
        errors = []
        page.on("console", lambda m: errors.append(m.text)
                if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
        url = (site_html / "chapters" / f"{stem}.html").as_uri()
        page.goto(url, wait_until="load")
        for pid in ids:
            root = page.locator(f"#{pid}")
            assert root.count() == 1, f"{stem}: player {pid} missing"
            handle = root.element_handle()

            def state(handle=handle):
                return page.evaluate(STATE, handle)

            assert state()["loaded"], f"{pid}: first frame not loaded"
            controls = page.evaluate(CONTROLS, handle)
            assert controls, f"{pid}: no controls"
            for control in controls:
                assert control["label"], f"{pid}: {control['id']} has no label"
                assert control["count"] > 1, f"{pid}: {control['id']} one value"
                _move(page, control, state)
            for scheme in ("light", "dark"):
                page.evaluate(f"document.body.dataset.theme = '{scheme}'")
                root.scroll_into_view_if_needed()
                root.screenshot(path=str(shots / f"{pid}-{scheme}.png"))
            page.evaluate("document.body.dataset.theme = 'auto'")
        if errors:
            problems.append(f"{stem}: console errors {errors}")
        page.close()
    assert not disk_context.refused, f"requests left disk: {disk_context.refused}"
    assert not problems, "\n".join(problems)


def test_players_fit_the_budget(pages, site_html):
    """Under 2 MB per figure, measured in the built page."""
    for stem, ids in pages.items():
        html = (site_html / "chapters" / f"{stem}.html").read_text(encoding="utf-8")
        for pid in ids:
            start = html.index(f'class="nl-player" id="{pid}"')
            end = html.index("})();</script></div>", start)
            assert end - start < 2_000_000, f"{pid}: {end - start} bytes"


def test_a_player_made_now_works_offline(disk_context, tmp_path):
    """The library's current player.js, in a player made here (the stored
    chapters hold the script of the run that made them): every control of a
    two-control player moved, each move a new picture, no console error."""
    from netcl_lite.viz import player

    def draw(fig, slope, style):
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, slope], style)
        ax.set_ylim(-2, 2)

    p = player(draw, {"slope": [-1, 0, 1], "style": ["-", "--"]}, name="fresh",
               title="A line", start={"slope": 1}, figsize=(2, 1.5), dpi=40)
    path = tmp_path / "player.html"
    path.write_text(f"<!doctype html><html><body>{p.html()}</body></html>",
                    encoding="utf-8")
    page = disk_context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.goto(path.as_uri(), wait_until="load")
    handle = page.locator("#fresh").element_handle()

    def state():
        return page.evaluate(STATE, handle)

    controls = page.evaluate(CONTROLS, handle)
    assert [c["tag"] for c in controls] == ["input", "select"]
    for control in controls:
        _move(page, control, state)
    page.fill("#fresh-0", "0")
    assert state()["alt"] == "A line: slope = -1, style = -"
    assert state()["outputs"] == ["-1"]
    page.close()
    assert not errors, errors
