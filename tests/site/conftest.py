"""Fixtures for the course site: the build tools (``tool``), a built site
(rebuilt when stale), a loopback HTTP server over it, and headless Chromium
with the network cut.

COURSE_SITE_ROOT=DIR tests a site built from another tree's chapters (the
build then goes to DIR/_build). COURSE_REQUIRE_BROWSER=1 (set by .ci/run)
turns a missing Chromium into a failure instead of a skip.
"""

import functools
import http.server
import importlib
import os
import pathlib
import shutil
import sys
import threading
import urllib.parse
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOT = pathlib.Path(os.environ.get("COURSE_SITE_ROOT", REPO)).resolve()
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
    "--disable-default-apps", "--disable-extensions",
]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def load_tool(name):
    """tools/NAME.py as a module (the tools import each other by name, as
    they do when run as scripts)."""
    tools = str(REPO / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    return importlib.import_module(name)


@pytest.fixture(scope="session")
def tool():
    """``tool("build_site")``: a module of tools/."""
    return load_tool


@pytest.fixture(scope="session")
def site_html(tool):
    """_build/html, built (or rebuilt, when an input changed) first."""
    index = tool("build_site").build(ROOT, ROOT / "_build", quiet=True)
    return index.parent


@pytest.fixture(scope="session")
def site_chapters():
    return sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url(site_html):
    handler = functools.partial(_QuietHandler, directory=str(site_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _need_browser():
    why = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        why = "the playwright package is not installed (pip install -e .[site])"
    if why is None and not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        why = (f"no Chromium at {CHROMIUM}: apt-get install chromium "
               "(.ci/run installs it)")
    if why:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="session")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                               args=CHROMIUM_ARGS)
        yield b
        b.close()


class OfflineContext:
    """A browser context whose requests may only reach loopback hosts;
    every other request is aborted and recorded in .blocked."""

    def __init__(self, browser, viewport=None):
        self.blocked = []
        self.context = browser.new_context(
            viewport=viewport or {"width": 1280, "height": 860},
            service_workers="block")
        self.context.route("**/*", self._route)
        self.context.on("request", self._watch)

    def _offsite(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return False
        return parts.hostname not in LOOPBACK

    def _route(self, route):
        if self._offsite(route.request.url):
            self.blocked.append(route.request.url)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def _watch(self, request):
        if self._offsite(request.url) and request.url not in self.blocked:
            self.blocked.append(request.url)

    def close(self):
        self.context.close()


@pytest.fixture(scope="session")
def offline(browser):
    ctx = OfflineContext(browser)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def offline_phone(browser):
    """The same, 390 px wide: a phone held upright."""
    ctx = OfflineContext(browser, viewport={"width": 390, "height": 844})
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def disk(browser, site_html):
    """A context that may open the site's own files (file://) and nothing
    else; it records each file read (``.files``) and each request refused
    (``.refused``). The live figures' tests open pages in it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  service_workers="block")
    context.refused, context.files = [], []
    site = site_html.resolve()

    def route(r):
        url = r.request.url
        scheme = url.split(":", 1)[0]
        if scheme in ("data", "blob", "about"):
            return r.continue_()
        if scheme == "file":
            path = pathlib.Path(urllib.request.url2pathname(
                urllib.parse.urlsplit(url).path)).resolve()
            if path == site or site in path.parents:
                context.files.append(path)
                return r.continue_()
        context.refused.append(url)
        r.abort("blockedbyclient")

    context.route("**/*", route)
    yield context
    context.close()



@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that used a Jupyter server (tests/site/test_lab.py's
    Server, alone or in a tuple) shows the server's log."""
    report = (yield).get_result()
    if not report.failed:
        return
    for value in getattr(item, "funcargs", {}).values():
        for obj in value if isinstance(value, tuple) else (value,):
            if hasattr(obj, "log_text"):
                report.sections.append(("Jupyter server log", obj.log_text()))
