"""An interactive figure live in JupyterLab: chapter 04 runs in a real Lab
page (headless Chromium, network cut), then its figure's controls are moved
with the keyboard and the mouse API; each move must make the kernel draw a
new picture (netcl_lite.viz.player's live widget).

Nothing runs before the notebook's kernel is connected and idle: opening a
notebook can start a kernel that Lab shuts down a moment later for a second
one, and a run sent to the first is lost. When the kernel changes while the
chapter runs, the test follows the new one and runs the chapter again. Each
phase has its own limit: the server SERVER_LIMIT, an idle kernel
KERNEL_LIMIT, each cell before the figure's CELL_TIMEOUT, and the widget
WIDGET_LIMIT from the start of its cell. A failure shows the server's log.
``test_..._after_a_kernel_swap`` replaces the kernel (through the server's
sessions API) while it starts, as Lab once did on CI.

COURSE_LAB_WIDGET_CHAPTER=NN picks another chapter with a player.
"""

import json
import os
import time

import pytest

from test_lab import CELL_TIMEOUT, ROOT, Server, copy_course

CHAPTER = os.environ.get("COURSE_LAB_WIDGET_CHAPTER", "04")
WIDGET_LIMIT = 60  # s, from the start of the figure's cell
SWAPS = 2          # kernel changes followed before giving up

IMAGE = """() => {
  const img = document.querySelector('.jp-OutputArea .widget-image');
  return img ? img.src : null;
}"""

# each code cell's prompt: "[*]:" queued or running, "[12]:" done
PROMPTS = """() => [...document.querySelectorAll(
  '.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent)"""

PAGE_IDLE = """() => {
  const i = document.querySelector('.jp-Notebook-ExecutionIndicator');
  return i && i.dataset.status === 'idle';
}"""


def widget_cell(path):
    """The index, among code cells, of the first cell that shows a player."""
    code = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]
    return min(i for i, c in enumerate(code)
               if any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                      for o in c.get("outputs", [])))


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab-widgets")
    root = tmp / "course"
    root.mkdir()
    copy_course(root)
    server = Server(root, tmp)
    yield server
    server.stop()


class Notebook:
    """A chapter open in a Lab page, run through its kernel."""

    def __init__(self, server, page, path):
        self.server, self.page = server, page
        self.errors = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.rel = f"chapters/{path.name}"
        self.cell = widget_cell(path)
        self.kernel = None
        self.swaps = []
        self.start = time.monotonic()

    def say(self, what):
        """One line of the test's timeline (shown with a failure, or -s)."""
        print(f"{time.monotonic() - self.start:6.1f} s  {what}", flush=True)

    def pause(self, seconds):
        """Wait, letting the page work: its requests pass through the
        offline context's route, whose handler runs only while playwright
        is called (time.sleep would stall the page)."""
        self.page.wait_for_timeout(seconds * 1000)

    def ready(self):
        """Wait for a kernel connected and idle, in the server and in the
        page; remember it."""
        self.kernel = self.server.wait_for_idle_kernel(self.rel, pause=self.pause)
        self.page.wait_for_function(PAGE_IDLE, timeout=60_000)
        self.say(f"kernel {self.kernel[:8]} connected and idle")

    def run_all(self):
        page = self.page
        for attempt in range(2):  # a menu click can be lost while Lab settles
            page.locator(".jp-NotebookPanel .jp-Cell").first.click()
            page.get_by_role("menuitem", name="Run").first.click()
            page.get_by_role("menuitem", name="Run All Cells").first.click()
            try:
                page.wait_for_function(
                    f"() => ({PROMPTS})().some(p => p.includes('[*]'))",
                    timeout=30_000)
                self.say("Run All Cells: cells queued")
                return
            except Exception:
                if attempt:
                    raise

    def swapped(self):
        k = self.server.notebook_kernel(self.rel)
        return k is None or k["id"] != self.kernel

    def run_until_the_widget_shows(self, while_running=None):
        """Run every cell; return the widget's first picture. A kernel
        swap on the way: wait for the new one, then run everything again.
        ``while_running()``, if given, is called once, as the first run
        is under way (the swap test swaps the kernel there)."""
        self.ready()
        self.run_all()
        if while_running:
            while_running()
        running, since, cell_start = None, time.monotonic(), None
        while True:
            image = self.page.evaluate(IMAGE)
            if image and image.startswith("blob:"):
                self.say("the widget shows its picture")
                return image
            if self.swapped():
                self.say(f"kernel {self.kernel[:8]} replaced: following the new one")
                self.swaps.append(self.kernel)
                assert len(self.swaps) <= SWAPS, f"kernels swapped: {self.swaps}"
                self.ready()
                self.run_all()
                running, since, cell_start = None, time.monotonic(), None
                continue
            prompts = self.page.evaluate(PROMPTS)
            now = time.monotonic()
            first = next((i for i, p in enumerate(prompts) if "[*]" in p),
                         len(prompts))
            if first != running:
                running, since = first, now
            if first >= self.cell and cell_start is None:
                cell_start = now
                self.say(f"code cell {self.cell} (the figure's) under way")
            if cell_start is not None:
                assert now - cell_start < WIDGET_LIMIT, (
                    f"no widget {WIDGET_LIMIT} s after code cell {self.cell} "
                    f"started (prompts {prompts})")
            else:
                assert now - since < CELL_TIMEOUT, (
                    f"code cell {first} ran for more than {CELL_TIMEOUT} s")
            self.pause(0.5)


def open_chapter(server, offline):
    (path,) = sorted((ROOT / "chapters").glob(f"{CHAPTER}_*.ipynb"))
    nb = Notebook(server, offline.context.new_page(), path)
    nb.page.goto(f"{server.base}/lab/tree/chapters/{path.name}?token={server.token}")
    nb.page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    return nb


def move_the_controls(page, first):
    """Each slider one step right and back; each step redraws."""

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


def test_live_controls_redraw_in_jupyterlab(lab_server, browser, offline,
                                            tmp_path_factory):
    blocked_before = len(offline.blocked)
    nb = open_chapter(lab_server, offline)
    move_the_controls(nb.page, nb.run_until_the_widget_shows())
    shots = os.environ.get("PLAYER_SCREENSHOTS") or tmp_path_factory.mktemp("lab")
    widget = nb.page.locator(".jp-OutputArea-output:has(.widget-image)").first
    widget.scroll_into_view_if_needed()
    widget.screenshot(path=os.path.join(str(shots), f"lab-{CHAPTER}-live.png"))
    nb.page.close()
    assert not nb.errors, nb.errors
    assert offline.blocked[blocked_before:] == []


def test_live_controls_redraw_after_kernel_swaps(lab_server, browser, offline):
    """The notebook's kernel is replaced twice (a new kernel for the
    session, the old one shut down, as the sessions API does on a change
    of kernel): while the first one starts, as Lab once did on CI, and
    while the chapter runs. The page must end up on the third kernel, and
    the figure must still redraw."""
    server = lab_server
    for session in server.get("/api/sessions"):  # the first test's
        server.request("DELETE", f"/api/sessions/{session['id']}")
    nb = open_chapter(server, offline)
    deadline = time.monotonic() + 60
    while (first := server.notebook_kernel(nb.rel)) is None:
        assert time.monotonic() < deadline, "the page started no kernel"
        nb.pause(0.1)
    kernels = [first["id"]]

    def swap():
        (session,) = [s for s in server.get("/api/sessions") if s["path"] == nb.rel]
        new = server.request("PATCH", f"/api/sessions/{session['id']}",
                             {"kernel": {"name": "python3"}})
        kernels.append(new["kernel"]["id"])
        nb.say(f"swapped kernel {kernels[-2][:8]} for {kernels[-1][:8]}")

    swap()
    move_the_controls(nb.page, nb.run_until_the_widget_shows(while_running=swap))
    nb.page.close()
    assert len(set(kernels)) == 3 and nb.kernel == kernels[-1], (kernels, nb.kernel)
    assert nb.swaps == [kernels[1]]  # the swap while running was followed
    alive = [k["id"] for k in server.get("/api/kernels")]
    assert not set(kernels[:2]) & set(alive), (kernels, alive)
