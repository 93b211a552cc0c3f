"""An interactive figure live in JupyterLab: chapter 04 runs in a real Lab
page (headless Chromium, network cut), then its figure's controls are moved
with the keyboard and the mouse API; each move must make the kernel draw a
new picture (netcl_lite.viz.player's live widget).

COURSE_LAB_WIDGET_CHAPTER=NN picks another chapter with a player.
"""

import os

import pytest

from test_lab import ROOT, Server, copy_course

CHAPTER = os.environ.get("COURSE_LAB_WIDGET_CHAPTER", "04")

IMAGE = """() => {
  const img = document.querySelector('.jp-OutputArea .widget-image');
  return img ? img.src : null;
}"""


# cells are queued or running: their prompts show [*] (the stored notebook
# already shows execution counts)
RUNNING = """() => [...document.querySelectorAll('.jp-InputArea-prompt')]
  .some(p => p.textContent.includes('[*]'))"""


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab-widgets")
    root = tmp / "course"
    root.mkdir()
    copy_course(root)
    server = Server(root, tmp)
    yield server
    server.stop()


def test_live_controls_redraw_in_jupyterlab(lab_server, browser, offline,
                                            tmp_path_factory):
    (path,) = sorted((ROOT / "chapters").glob(f"{CHAPTER}_*.ipynb"))
    page = offline.context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    blocked_before = len(offline.blocked)
    server = lab_server
    page.goto(f"{server.base}/lab/tree/chapters/{path.name}?token={server.token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    page.wait_for_function(
        "() => document.querySelector('.jp-Notebook-ExecutionIndicator')"
        " && document.querySelector('.jp-Notebook-ExecutionIndicator')"
        ".dataset.status === 'idle'", timeout=60_000)
    for attempt in range(2):  # a menu click can be lost while Lab settles
        page.locator(".jp-NotebookPanel .jp-Cell").first.click()
        page.get_by_role("menuitem", name="Run").first.click()
        page.get_by_role("menuitem", name="Run All Cells").first.click()
        try:
            page.wait_for_function(RUNNING, timeout=60_000)
            break
        except Exception:
            if attempt:
                raise
    # the live figure: an image widget and its controls (the whole chapter
    # runs first: minutes on a loaded machine)
    page.wait_for_function(f"() => ({IMAGE})() && ({IMAGE})().startsWith('blob:')",
                           timeout=600_000)
    first = page.evaluate(IMAGE)

    def changed(before):
        page.wait_for_function(f"b => ({IMAGE})() !== b", arg=before,
                               timeout=60_000)
        return page.evaluate(IMAGE)

    # every control is a SelectionSlider: its handle takes the arrow keys
    handles = page.locator(".jp-OutputArea .widget-slider .noUi-handle")
    assert handles.count() >= 1
    picture = first
    for i in range(handles.count()):
        handles.nth(i).focus()
        page.keyboard.press("ArrowRight")
        picture = changed(picture)
        page.keyboard.press("ArrowLeft")
        picture = changed(picture)
    shots = os.environ.get("PLAYER_SCREENSHOTS") or tmp_path_factory.mktemp("lab")
    widget = page.locator(".jp-OutputArea-output:has(.widget-image)").first
    widget.scroll_into_view_if_needed()
    widget.screenshot(
        path=os.path.join(str(shots), f"lab-{CHAPTER}-live.png"))
    page.close()
    assert not errors, errors
    assert offline.blocked[blocked_before:] == []
