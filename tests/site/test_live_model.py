"""Chapter 09's live figure: the trained model runs in the page
(site/_static/live/model.js, files from tools/live_model.py),
checked against DecoderLM with the same weights.

The chapter page is opened from disk (file://) in headless Chromium, with
every request that is not a file of the site refused. The test asks for the
model, types sentences into the figure's ``text`` input and reads the JSON
of its [data-output] element: the ids against BPETokenizer, the last
position's logits (within 1e-4 of their scale), every head's attention
weights (within 1e-4) and the top next tokens against DecoderLM on the
weights stored in figures/09_model.onnx. The model's context is
max_seq_len tokens: for a longer text the page reads the last ones (as
``generate`` crops its context) and says how many it dropped.

The page must stay under 2 MB until the model is asked for, log no console
error and request nothing outside the site. Screenshots at 1280 and 390 px
go to LIVE_SCREENSHOTS=DIR (else a temporary folder); sizes and times are
printed (pytest -s shows them).
"""

import json
import os
import pathlib
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest

from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor
from netcl_lite.nn import DecoderConfig, DecoderLM
from netcl_lite.text import BPETokenizer

# The site shows the model only where onnx read its config (tools/live_model.py),
# and the weights the test compares with come from the same file.
onnx = pytest.importorskip("onnx", reason="onnx (the dev extra) reads "
                           "figures/09_model.onnx")

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOT = pathlib.Path(os.environ.get("COURSE_SITE_ROOT", REPO)).resolve()
PAGE = "chapters/09_train_a_decoder.html"
BUDGET = 2_000_000
TOL = 1e-4

ZWJ_FAMILY = "👨\u200d👩\u200d👧\u200d👦"
TEXTS = [
    "",
    "a",
    "ROMEO:\nBut, soft! what light through yonder window breaks?\n",
    ZWJ_FAMILY + " and 🏳️\u200d🌈, 👍🏽",
    "中文分词：我爱自然语言处理。日本語のテキスト",
    "tabs\t\tand    many     spaces\n\n\n   \n",
    "<|endoftext|> is plain text here",
]


def random_text(rng, n):
    pool = list("abcdefghijklmnopqrstuvwxyz ABCDEFG 0123456789 .,;:!?'\"()-\n\t  "
                "éüßçñ中文日本語Привет🙂👍🏽") + [ZWJ_FAMILY]
    return "".join(rng.choice(pool, size=n))


@pytest.fixture(scope="module")
def trained():
    """DecoderLM on the weights the page runs, and the chapter's tokenizer."""
    proto = onnx.load(str(ROOT / "figures" / "09_model.onnx"))
    meta = {p.key: p.value for p in proto.metadata_props}
    config = DecoderConfig.from_dict(json.loads(meta["netcl_lite.config"]))
    queue = manager.default("auto").queue
    model = DecoderLM(queue, config)
    stored = {t.name: onnx.numpy_helper.to_array(t)
              for t in proto.graph.initializer}
    for name, p in model.named_parameters():
        p.value = Tensor.from_host(queue, stored[name])
    tok = BPETokenizer.load(ROOT / "figures" / "09_shakespeare.bpe")
    return model, tok


class ModelFigure:
    """The chapter page, its model figure, and what it logged and loaded."""

    def __init__(self, context, site_html):
        self.context, self.errors = context, []
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text)
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.goto((site_html / PAGE).as_uri(), wait_until="load")
        self.root = self.page.locator('[data-live="model"]')
        assert self.root.count() == 1, f"{PAGE}: no data-live='model'"
        self.wait(0)
        self.before = sorted(set(context.files))   # read before the model is
        start = time.perf_counter()
        after = self.version()
        self.root.locator("button.live-load").click()
        self.wait(after, timeout=180_000)
        self.first_result_s = time.perf_counter() - start

    def version(self):
        return int(self.root.get_attribute("data-version") or 0)

    def wait(self, after, timeout=60_000):
        self.page.wait_for_function(
            """after => {
                 const r = document.querySelector('[data-live="model"]');
                 return r && Number(r.dataset.version) > after
                   && r.dataset.state !== 'busy';
               }""", arg=after, timeout=timeout)

    def output(self):
        return json.loads(self.root.locator("[data-output]").text_content())

    def type(self, text):
        """Put text in the input as typing would leave it (fill() sends an
        input event per line), then read the result for that text."""
        field = self.root.locator('[name="text"]')
        field.fill(text)
        self.page.wait_for_function(
            """text => {
                 const r = document.querySelector('[data-live="model"]');
                 if (r.dataset.state === 'busy') return false;
                 const out = JSON.parse(r.querySelector('[data-output]').textContent);
                 return out.error !== undefined || out.text === text;
               }""", arg=text, timeout=60_000)
        assert self.root.get_attribute("data-state") == "done", self.output()
        return self.output()


@pytest.fixture(scope="module")
def figure(disk, site_html):
    fig = ModelFigure(disk, site_html)
    yield fig
    fig.page.close()


def expected(model, tok, text):
    """What the page must show for text: the last max_seq_len ids, the last
    position's logits and every layer's attention, from DecoderLM."""
    every = tok.encode_ordinary(text)
    ids = every[-model.config.max_seq_len:]
    if not ids:
        return every, ids, None, None
    batch = np.array([ids], np.int32)
    logits = model(batch).value.to_host()[0, -1]                 # (V,)
    maps = np.stack(model.attention_maps(batch))[:, 0]           # (L, H, S, S)
    return every, ids, logits, maps


def check(got, model, tok, text):
    every, ids, logits, maps = expected(model, tok, text)
    assert got["text"] == text
    assert got["ids"] == ids, text[:80]
    assert got["dropped"] == len(every) - len(ids)
    assert got["tokens"] == [tok.decode([i]) for i in ids]
    if not ids:
        assert got["attention"] == [] and got["top"] == []
        return
    page = np.array(got["logits"])
    err = np.abs(page - logits).max() / np.abs(logits).max()
    assert err < TOL, f"logits differ by {err:.1e} of their scale: {text[:80]!r}"
    A = np.array(got["attention"])                               # (L, H, S, S)
    assert A.shape == maps.shape
    np.testing.assert_allclose(A, maps, atol=TOL)
    # the top tokens: the largest logits, in order, with their probabilities
    p = np.exp(logits - logits.max())
    p /= p.sum()
    top = [t["id"] for t in got["top"]]
    assert len(top) == 10 and len(set(top)) == 10
    assert np.all(np.diff(logits[top]) <= TOL * np.abs(logits).max())
    assert logits[top[-1]] >= np.sort(logits)[-10] - TOL * np.abs(logits).max()
    np.testing.assert_allclose([t["p"] for t in got["top"]], p[top], atol=1e-5)
    assert [t["token"] for t in got["top"]] == [tok.decode([i]) for i in top]


def test_the_page_is_small_until_the_model_is_asked_for(figure, site_html):
    sizes = {p.relative_to(site_html.resolve()).as_posix(): p.stat().st_size
             for p in figure.before}
    total = sum(sizes.values())
    model_dir = site_html / "_static" / "live" / "model"
    model_files = {p.name: p.stat().st_size for p in model_dir.iterdir()}
    print(f"\n{PAGE}: {total / 1e6:.2f} MB in {len(sizes)} files before the model; "
          f"the model's files: " + ", ".join(f"{n} {s / 1e6:.2f} MB"
                                              for n, s in sorted(model_files.items()))
          + f"; first result {figure.first_result_s:.1f} s after the click")
    assert total < BUDGET, sorted(sizes.items(), key=lambda kv: -kv[1])[:8]
    assert not [n for n in sizes if n.startswith("_static/live/model/")]
    loaded = {p.name for p in set(figure.context.files) if p.parent == model_dir}
    assert loaded == set(model_files)        # and the click loaded them all


def test_the_default_sentence_matches_the_model(figure, trained):
    got = figure.output()
    assert got["loaded"] and got["ids"]
    text = figure.root.locator('[name="text"]').input_value()
    check(got, *trained, text)


@pytest.mark.parametrize("index", range(len(TEXTS)))
def test_edge_sentences_match_the_model(figure, trained, index):
    check(figure.type(TEXTS[index]), *trained, TEXTS[index])


def test_random_sentences_match_the_model(figure, trained):
    rng = np.random.default_rng(9)
    for n in (1, 5, 30, 120):
        text = random_text(rng, n)
        check(figure.type(text), *trained, text)


def test_2000_characters_read_as_the_last_tokens_of_the_context(figure, trained):
    model, tok = trained
    text = (ROOT / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    text = text[10_000:12_000]
    got = figure.type(text)
    check(got, model, tok, text)
    assert len(got["ids"]) == model.config.max_seq_len and got["dropped"] > 0
    shown = figure.root.locator(".live-view").inner_text()
    assert f"the last {model.config.max_seq_len} of" in shown


def test_the_reader_sees_every_head_and_the_top_tokens(figure, trained):
    model, _ = trained
    figure.type("ROMEO:\nO, she doth teach the torches to burn bright!")
    c = model.config
    assert figure.root.locator("canvas.live-map").count() == c.n_layers * c.n_heads
    rows = figure.root.locator("table.live-top tbody tr")
    assert rows.count() == 10
    assert "%" in rows.first.inner_text()


def test_no_console_error_and_no_request_outside_the_site(figure, disk):
    assert not figure.errors, figure.errors
    assert not disk.refused, disk.refused


def test_screenshots(browser, site_html, tmp_path_factory):
    """The figure at 1280 and 390 px, after a sentence: saved for a person
    to look at; the figure may scroll sideways inside itself, the page not."""
    folder = pathlib.Path(os.environ.get("LIVE_SCREENSHOTS")
                          or tmp_path_factory.mktemp("live-model"))
    folder.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.route("http*://**/*", lambda r: r.abort("blockedbyclient"))
        context.files = []
        fig = ModelFigure(context, site_html)
        fig.type("JULIET:\nO Romeo, Romeo! wherefore art thou Romeo?\n")
        fig.root.scroll_into_view_if_needed()
        path = folder / f"09_live_model_{width}.png"
        fig.root.screenshot(path=str(path))
        page_width = fig.page.evaluate("document.documentElement.scrollWidth")
        context.close()
        print(f"\nscreenshot: {path}")
        assert page_width <= width, f"the page scrolls sideways at {width} px"
        assert path.stat().st_size > 10_000
