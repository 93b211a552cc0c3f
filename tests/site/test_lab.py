"""JupyterLab smoke test: the server `make lab` starts, on 127.0.0.1 with a
token, over a temporary copy of the course; a chapter's MyST twin opens as
a notebook (jupytext), and one chapter runs top to bottom in a kernel
started through the server (REST API + kernel websocket).

COURSE_LAB_CHAPTER=NN picks the chapter (default: the one with the least
code). The copy keeps the repository clean: chapters may write files.
Each phase has its own limit (the server SERVER_LIMIT, a notebook's kernel
KERNEL_LIMIT, a cell CELL_TIMEOUT), and a test that fails prints the
server's log.
"""

import datetime
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOT = pathlib.Path(os.environ.get("COURSE_SITE_ROOT", REPO)).resolve()
# The same settings `make lab` passes (see the Makefile); the root folder is
# overridden with the temporary copy.
LAB_CONFIG = REPO / "tools" / "lab" / "jupyter_lab_config.py"
SERVER_LIMIT = 60   # s: the server answers
KERNEL_LIMIT = 120  # s: a notebook's kernel is connected and idle
CELL_TIMEOUT = 120  # s: one cell runs


def chapter_code(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "code"]


def pick_chapter():
    notebooks = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        pytest.skip("no chapter notebooks yet")
    wanted = os.environ.get("COURSE_LAB_CHAPTER")
    if wanted:
        (path,) = [p for p in notebooks if p.name.startswith(wanted + "_")]
        return path
    return min(notebooks, key=lambda p: sum(map(len, chapter_code(p))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_course(dest):
    def ignore(folder, names):
        """Checkpoints, caches, and whatever is not a plain file or folder
        (a running kernel's IPC sockets, say)."""
        base = pathlib.Path(folder)
        return [n for n in names
                if n in (".ipynb_checkpoints", "__pycache__")
                or not ((base / n).is_file() or (base / n).is_dir())]

    for name in ("chapters", "figures", "data"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("jupytext.toml", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)


class Server:
    def __init__(self, root, tmp):
        self.port, self.token = free_port(), uuid.uuid4().hex
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ,
                   JUPYTER_CONFIG_DIR=str(tmp / "config"),
                   JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                   IPYTHONDIR=str(tmp / "ipython"),
                   MPLBACKEND="agg")
        self.log_path = tmp / "server.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
             "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}",
             f"--config={LAB_CONFIG}",
             f"--ServerApp.root_dir={root}",
             *(["--allow-root"] if os.geteuid() == 0 else [])],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + SERVER_LIMIT
        while True:
            try:
                self.get("/api/status")
                return
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"Jupyter server did not answer within "
                                       f"{SERVER_LIMIT} s:\n{self.log_text()}")
                time.sleep(0.3)

    def log_text(self):
        """What the server has logged (a failed test that used it shows
        this: tests/site/conftest.py)."""
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def notebook_kernel(self, path):
        """The kernel of the session open on ``path`` ({id, execution_state,
        connections, ...}), or None."""
        for session in self.get("/api/sessions"):
            if session.get("path") == path and session.get("kernel"):
                return session["kernel"]
        return None

    def wait_for_idle_kernel(self, path, limit=KERNEL_LIMIT, steady=2.0,
                             pause=time.sleep):
        """The id of the notebook's kernel once a page is connected to it
        (its websocket is open) and it is idle, and it has stayed the same
        kernel, connected and idle, for ``steady`` seconds: a kernel that
        Lab replaces right after starting it never counts. Fails after
        ``limit`` seconds, with each state seen. ``pause(seconds)`` waits
        between looks: a page's ``wait_for_timeout``, when a page must go on
        loading meanwhile (its requests pass through the test's route)."""
        deadline = time.monotonic() + limit
        seen, ready_since = [], None
        while time.monotonic() < deadline:
            k = self.notebook_kernel(path)
            state = (k["id"][:8], k["execution_state"], k["connections"]) if k else (
                "sessions:", [s["path"] for s in self.get("/api/sessions")])
            if not seen or seen[-1] != state:
                seen.append(state)
            if k and k["execution_state"] == "idle" and k["connections"] > 0:
                if ready_since is None or ready_since[0] != k["id"]:
                    ready_since = (k["id"], time.monotonic())
                elif time.monotonic() - ready_since[1] >= steady:
                    return k["id"]
            else:
                ready_since = None
            pause(0.25)
        raise AssertionError(f"{path}: no kernel connected and idle within "
                             f"{limit} s; (kernel, state, connections) seen: "
                             f"{seen}")

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Authorization": f"token {self.token}",
                     "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            text = resp.read().decode()
            return json.loads(text) if text.strip() else None

    def get(self, path):
        return self.request("GET", path)

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.request("POST", "/api/shutdown")
                self.proc.wait(timeout=15)
            except Exception:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "course"
    root.mkdir()
    chapter = pick_chapter()
    copy_course(root)
    server = Server(root, tmp)
    yield server, chapter
    server.stop()


def test_lab_serves_and_the_twin_opens_as_a_notebook(lab):
    server, chapter = lab
    with urllib.request.urlopen(
            f"{server.base}/lab?token={server.token}", timeout=30) as resp:
        assert resp.status == 200
        assert b"JupyterLab" in resp.read()
    twin = f"chapters/{chapter.stem}.md"
    model = server.get(f"/api/contents/{twin}?type=notebook&content=1")
    assert model["type"] == "notebook"
    stored = json.loads(chapter.read_text(encoding="utf-8"))
    assert len(model["content"]["cells"]) == len(stored["cells"])
    # paired with the .ipynb: the twin opens with the stored outputs
    assert any(c.get("outputs") for c in model["content"]["cells"]
               if c["cell_type"] == "code")
    settings = server.get(
        "/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    # tools/lab/overrides.json: a double click opens the twin as a notebook
    viewers = settings["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers.get("markdown") == "Jupytext Notebook", viewers


def test_the_file_browser_lists_each_chapter_once(lab):
    server, chapter = lab
    names = [item["name"] for item in server.get("/api/contents/chapters")["content"]]
    assert chapter.name in names
    assert not [n for n in names if n[:2].isdigit() and n.endswith(".md")], names


def execute(ws, session, code):
    """Run one cell; return (status, error text)."""
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request",
                   "username": "smoke", "session": session, "version": "5.3",
                   "date": datetime.datetime.now(datetime.timezone.utc)
                   .isoformat()},
        "parent_header": {}, "metadata": {}, "channel": "shell",
        "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True,
                    "user_expressions": {}, "allow_stdin": False,
                    "stop_on_error": True},
    }))
    error = ""
    while True:
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "error":
            error = f"{msg['content']['ename']}: {msg['content']['evalue']}"
        if msg["channel"] == "shell" and msg["msg_type"] == "execute_reply":
            return msg["content"]["status"], error


def test_a_chapter_runs_through_a_kernel_of_the_server(lab):
    import websocket

    server, chapter = lab
    session = server.request("POST", "/api/sessions", {
        "path": f"chapters/{chapter.name}", "type": "notebook",
        "name": chapter.name, "kernel": {"name": "python3"}})
    kernel = session["kernel"]["id"]
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{server.port}/api/kernels/{kernel}/channels"
        f"?token={server.token}", timeout=CELL_TIMEOUT)
    try:
        # nothing runs before the kernel is idle with this socket connected
        assert server.wait_for_idle_kernel(f"chapters/{chapter.name}") == kernel
        cells = chapter_code(chapter)
        for i, code in enumerate(cells):
            status, error = execute(ws, uuid.uuid4().hex, code)
            assert status == "ok", f"{chapter.name} code cell {i}: {error}"
        status, _ = execute(ws, uuid.uuid4().hex,
                            "import os; print(os.getcwd())")
        assert status == "ok"
    finally:
        ws.close()
        server.request("DELETE", f"/api/sessions/{session['id']}")
    assert kernel not in [k["id"] for k in server.get("/api/kernels")]


def test_the_twin_opens_as_a_notebook_in_the_lab_ui(lab, browser, offline,
                                                    tmp_path_factory):
    """In a real JupyterLab page (headless Chromium, network cut): the .md
    twin's default viewer is a notebook, and the page asks no outside host
    for anything (no news feed, no update check)."""
    server, chapter = lab
    twin = f"{chapter.stem}.md"
    page = offline.context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    blocked_before = len(offline.blocked)
    page.goto(f"{server.base}/lab/tree/chapters/{twin}?token={server.token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    assert page.locator(".jp-NotebookPanel").first.is_visible()
    assert page.locator(".lm-TabBar-tab", has_text=twin).count() >= 1
    page.wait_for_timeout(1000)
    out = (REPO / "docs" / "screenshots"
           if os.environ.get("UPDATE_SCREENSHOTS") == "1"
           else tmp_path_factory.mktemp("lab-screenshots"))
    page.screenshot(path=str(out / "lab.png"))
    page.close()
    assert not errors, errors
    assert offline.blocked[blocked_before:] == []


def test_the_token_url_opens_in_chapters(lab, browser, offline):
    """The URL the server prints (/lab?token=...) shows chapters/ at once."""
    server, chapter = lab
    page = offline.context.new_page()
    page.goto(f"{server.base}/lab?token={server.token}")
    item = page.locator(".jp-DirListing-item", has_text=chapter.name)
    item.first.wait_for(timeout=60_000)
    assert page.locator(".jp-DirListing-item", has_text=chapter.stem + ".md"
                        ).count() == 0
    page.close()
