"""The live figures (tools/live_figures.py) in the built course, checked
against the library.

Each chapter page is opened from disk (file://) in headless Chromium, with
every request that is not a file of the site refused. The test types random
and edge-case inputs into the figure's named form elements and reads the
JSON the figure writes into its [data-output] element (the contract in
site/_static/live/live.js):

- bpe: ids against BPETokenizer and tiktoken, for the chapter's tokenizer,
  gpt2, cl100k_base and o200k_base; the merge steps against merge_by_rank
  with the first k merges;
- attention: A and O against F.attention_weights and
  F.scaled_dot_product_attention, within 1e-6;
- scaling: the variances against numpy on the same seeded draws (the
  generator is written again below), and against d_k and 1;
- rope: q_rot and k_rot against F.rope, the scores against numpy;
- online-softmax: m, r and the partial outputs against numpy and against
  the chapter's own online_attention_row.

Pages must make no request outside the site and log no console error, and
each must stay under 2 MB before a vocabulary is picked. Screenshots at
1280 and 390 px go to LIVE_SCREENSHOTS=DIR (else a temporary folder); the
sizes and times are printed (pytest -s shows them).
"""

import gzip
import json
import math
import os
import pathlib
import re
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest
import regex
import tiktoken
import tiktoken.load

import netcl_lite.functional as F
from netcl_lite.core.device import manager
from netcl_lite.core.tensor import Tensor
from netcl_lite.text import GPT4_SPLIT_PATTERN, BPETokenizer
from netcl_lite.text.encode import merge_by_rank
from netcl_lite.text.vocabularies import find_files

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOT = pathlib.Path(os.environ.get("COURSE_SITE_ROOT", REPO)).resolve()
PAGES = {"bpe": "01_byte_level_bpe", "scaling": "03_scaling_factor",
         "attention": "04_causal_attention_by_hand", "rope": "06_rope",
         "online-softmax": "08_toward_flashattention"}
BUDGET = 2_000_000

# Text the issue names as edge cases, and some more.
ZWJ_FAMILY = "👨\u200d👩\u200d👧\u200d👦"
EDGE_TEXTS = [
    "", " ", "a", ZWJ_FAMILY + " and 🏳️\u200d🌈, 👍🏽",
    "中文分词：我爱自然语言处理。日本語のテキスト",
    "tabs\t\tand    many     spaces\n\n\n   \n", " " * 300 + "x" + "\n" * 40,
    "cafe\u0301 naïve Ωμέγα Привет мир",
    "I'm sure they've paid 12345 coins...\nWE'LL SEE",
    "<|endoftext|> is plain text here", "x = [i**2 for i in range(10)]  # squares\r\n",
]


def random_text(rng, n):
    pool = ("abcdefghijklmnopqrstuvwxyz ABCDEFG 0123456789 .,;:!?'\"()-\n\t  "
            "éüßçñ中文日本語한국어Привет🙂👍🏽" + ZWJ_FAMILY)
    return "".join(rng.choice(list(pool), size=n))


@pytest.fixture(scope="module")
def queue():
    return manager.default("auto").queue


class Figure:
    """One chapter page with its live figure, and its console errors."""

    def __init__(self, context, site_html, name):
        self.name, self.errors = name, []
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text)
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        start = time.perf_counter()
        self.page.goto((site_html / "chapters" / f"{PAGES[name]}.html").as_uri())
        self.root = self.page.locator(f'[data-live="{name}"]')
        assert self.root.count() == 1, f"{PAGES[name]}: no data-live={name!r}"
        self.wait(0)
        self.first_result_s = time.perf_counter() - start

    def version(self):
        return int(self.root.get_attribute("data-version") or 0)

    def wait(self, after):
        self.page.wait_for_function(
            """([name, after]) => {
                 const r = document.querySelector('[data-live="' + name + '"]');
                 return r && Number(r.dataset.version) > after
                   && r.dataset.state !== 'busy';
               }""", arg=[self.name, after], timeout=60_000)

    def output(self):
        return json.loads(self.root.locator("[data-output]").text_content())

    def set(self, **inputs):
        """Type each value into the input of that name (a select gets its
        option, a checkbox True or False), then read the result."""
        for name, value in inputs.items():
            field = self.root.locator(f'[name="{name}"]')
            assert field.count() == 1, f"{self.name}: no input named {name!r}"
            kind = field.evaluate("e => e.tagName === 'SELECT' ? 'select' : e.type")
            if kind == "select":
                field.select_option(str(value))
            elif kind == "checkbox":
                field.set_checked(bool(value))
            else:
                field.fill(str(value))
        # every change computes; ask once more so that the result read is the
        # one of all the values typed
        before = self.version()
        self.root.evaluate("r => r.liveUpdate()")
        self.wait(before)
        return self.output()


@pytest.fixture(scope="module")
def figures(disk, site_html):
    opened = {}

    def get(name):
        if name not in opened:
            opened[name] = Figure(disk, site_html, name)
        return opened[name]

    yield get
    problems = [f"{f.name}: {f.errors}" for f in opened.values() if f.errors]
    for f in opened.values():
        f.page.close()
    assert not problems, "console errors: " + "; ".join(problems)
    assert not disk.refused, f"requests outside the site: {disk.refused}"


# --- chapter 01: the tokenizer playground ---------------------------------------

@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    """{option value: (BPETokenizer, tiktoken Encoding)}, all offline."""
    out = {}
    course = BPETokenizer.load(ROOT / "figures" / "01_shakespeare.bpe")
    ranks = {course.decode_bytes([i]): i for i in range(course.vocab_size)}
    out["course"] = (course, tiktoken.Encoding(
        name="course", pat_str=GPT4_SPLIT_PATTERN, mergeable_ranks=ranks,
        special_tokens={}))
    vocab, (encoder_json, vocab_bpe) = find_files("gpt2")
    out["gpt2"] = (BPETokenizer.from_pretrained("gpt2"), tiktoken.Encoding(
        name="gpt2", pat_str=vocab.pattern, special_tokens=vocab.special_tokens,
        mergeable_ranks=tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=vocab_bpe, encoder_json_file=encoder_json)))
    for name in ("cl100k_base", "o200k_base"):
        vocab, (gz,) = find_files(name)
        plain = tmp_path_factory.mktemp(name) / f"{name}.tiktoken"
        plain.write_bytes(gzip.decompress(pathlib.Path(gz).read_bytes()))
        out[name] = (BPETokenizer.from_pretrained(name), tiktoken.Encoding(
            name=name, pat_str=vocab.pattern, special_tokens=vocab.special_tokens,
            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(plain))))
    return out


@pytest.mark.parametrize("tokenizer", ["course", "gpt2", "cl100k_base", "o200k_base"])
def test_bpe_ids_match_the_library_and_tiktoken(figures, tokenizers, tokenizer):
    fig = figures("bpe")
    ours, reference = tokenizers[tokenizer]
    rng = np.random.default_rng(1)
    texts = EDGE_TEXTS + [random_text(rng, 2_000), random_text(rng, 120),
                          (ROOT / "data" / "tinyshakespeare.txt").read_text(
                              encoding="utf-8")[:2_000]]
    for text in texts:
        got = fig.set(tokenizer=tokenizer, text=text)
        assert "error" not in got, got
        # a <textarea> keeps line breaks as \n (HTML normalizes \r\n and \r)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        want = ours.encode(text)
        assert want == reference.encode_ordinary(text), (tokenizer, text[:40])
        assert got["ids"] == want, (tokenizer, text[:60])
        assert got["tokens"] == len(want)
        assert got["bytes"] == len(text.encode("utf-8"))
        assert got["characters"] == len(text)


def prefix_encode(tok, text, k):
    """Ids of text with only the first k merges (the chapter's prefix trick)."""
    ranks = {pair: 256 + i for i, pair in enumerate(tok.merges[:k])}
    return [i for chunk in regex.findall(tok.pattern, text)
            for i in merge_by_rank(list(chunk.encode("utf-8")), ranks)]


def test_bpe_merge_steps(figures, tokenizers):
    fig = figures("bpe")
    course = tokenizers["course"][0]
    for text in ["To be, or not to be: that is the question.", ZWJ_FAMILY + " thee",
                 "Wherefore art thou Romeo?\n\n  HAMLET:"]:
        got = fig.set(tokenizer="course", text=text)
        steps = got["steps"]
        assert got["step"] == len(steps) and got["step_ids"] == got["ids"]
        assert steps == sorted(set(steps)) and all(s >= 256 for s in steps)
        lengths = []
        for step in range(len(steps) + 1):
            shown = fig.set(step=step)
            k = steps[step - 1] - 255 if step else 0
            assert shown["step_ids"] == prefix_encode(course, text, k), (text, step)
            assert shown["ids"] == course.encode(text)
            lengths.append(len(shown["step_ids"]))
            if step:  # each step is one merge that fires on this text
                assert steps[step - 1] in shown["step_ids"]
                assert list(course.merges[steps[step - 1] - 256]) == shown["merge"]
        assert lengths[0] == len(text.encode("utf-8"))
        assert all(a > b for a, b in zip(lengths, lengths[1:]))
    got = fig.set(text="")
    assert got["ids"] == [] and got["steps"] == [] and got["tokens"] == 0


# --- chapter 04: the worked example --------------------------------------------

def attention_inputs(Q, K, V, scale, mask):
    S, dk = Q.shape
    inputs = {"S": S, "d_k": dk, "d_v": V.shape[1], "scale": scale, "mask": mask}
    for which, M in (("Q", Q), ("K", K), ("V", V)):
        for (i, j), x in np.ndenumerate(M):
            inputs[f"{which}.{i}.{j}"] = repr(float(x))
    return inputs


def test_attention_matches_sdpa(figures, queue):
    fig = figures("attention")
    got = fig.output()  # the chapter's example as the page opens
    assert np.allclose(got["A"], [[1, 0, 0], [0.196, 0.804, 0], [0.198, 0.401, 0.401]],
                       atol=5e-4)
    rng = np.random.default_rng(4)
    cases = [(np.array([[1.0, 0], [0, 2], [1, 1]]),
              np.array([[1.0, 0], [1, 1], [0, 2]]),
              np.array([[10.0, 1], [20, 2], [30, 3]]))]
    for S, dk, dv in [(1, 1, 1), (6, 4, 4), (4, 3, 2), (5, 1, 3), (2, 4, 1), (6, 2, 4)]:
        cases.append(tuple(np.round(rng.uniform(-3, 3, size), 2)
                           for size in ((S, dk), (S, dk), (S, dv))))
    cases.append((np.full((3, 2), 40.0), np.array([[40.0, -40], [-40, 40], [40, 40]]),
                  np.eye(3)[:, :2]))  # logits in the thousands: one-hot rows
    for Q, K, V in cases:
        fig.set(**attention_inputs(Q, K, V, True, True))
        for scale in (True, False):
            for mask in (True, False):
                got = fig.set(scale=scale, mask=mask)
                assert "error" not in got, got
                c = 1 / math.sqrt(Q.shape[1]) if scale else 1.0
                Qd, Kd, Vd = (Tensor.from_host(queue, a) for a in (Q, K, V))
                A = F.attention_weights(Qd, Kd, causal=mask, scale=c).value.to_host()
                O = F.scaled_dot_product_attention(Qd, Kd, Vd, causal=mask,
                                                   scale=c).value.to_host()
                assert np.allclose(got["scores"], Q @ K.T, rtol=1e-12, atol=1e-12)
                assert np.allclose(got["logits"], c * (Q @ K.T), rtol=1e-12)
                # float32 logits carry an error of about eps32 * |logit| (and
                # FMA rounds one product of a tie but not the other): 1e-6 for
                # logits up to ~10, more for the saturated case
                big = np.abs(c * (Q @ K.T)).max()
                tol = max(1e-6, 4 * np.finfo(np.float32).eps * big)
                assert np.abs(np.array(got["A"]) - A).max() <= tol
                tol_O = tol * max(1.0, np.abs(V).max())
                assert np.abs(np.array(got["O"]) - O).max() <= tol_O
                logits = np.where(np.triu(np.ones_like(Q @ K.T), 1) * mask > 0, -np.inf,
                                  c * (Q @ K.T))
                A64 = np.exp(logits - logits.max(1, keepdims=True))
                A64 /= A64.sum(1, keepdims=True)
                assert np.allclose(got["A"], A64, rtol=0, atol=1e-12)
                assert np.allclose(got["O"], A64 @ V, rtol=1e-12, atol=1e-12)
                hidden = np.triu(np.ones((len(Q),) * 2, bool), 1) & mask
                masked = np.array(got["masked"], dtype=object)
                assert all(x is None for x in masked[hidden])
                assert np.all(np.array(got["A"])[hidden] == 0)
                assert np.allclose(np.array(got["A"]).sum(axis=1), 1, atol=1e-12)
    got = fig.set(**{"Q.0.0": ""})  # a number input holds no other text
    assert "Q.0.0" in got["error"]


# --- chapter 03: the scaling factor -------------------------------------------

def mulberry32_normals(seed):
    """The page's generator (live.js: Live.rng), drawn again in Python."""
    a, spare = seed & 0xFFFFFFFF, None
    M = 0xFFFFFFFF

    def uint32():
        nonlocal a
        a = (a + 0x6D2B79F5) & M
        t = a
        t = ((t ^ (t >> 15)) * (t | 1)) & M
        t = (t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & M)) & M)) & M
        return (t ^ (t >> 14)) & M

    while True:
        r = math.sqrt(-2 * math.log((uint32() + 0.5) / 4294967296))
        angle = 2 * math.pi * (uint32() + 0.5) / 4294967296
        yield r * math.cos(angle)
        yield r * math.sin(angle)


def test_scaling_variance(figures):
    fig = figures("scaling")
    for d_k, samples, seed in [(1, 16, 0), (2, 500, 1), (64, 4000, 3), (1024, 2000, 7),
                               (128, 20000, 3), (1000, 300, 12345)]:
        got = fig.set(d_k=d_k, samples=samples, seed=seed)
        draws = mulberry32_normals(seed)
        z = np.fromiter(draws, float, count=2 * d_k * samples).reshape(samples, 2, d_k)
        s = (z[:, 0] * z[:, 1]).sum(axis=1)
        assert got["variance"] == pytest.approx(s.var(), rel=1e-9)
        assert got["variance_scaled"] == pytest.approx(s.var() / d_k, rel=1e-9)
        # the sample variance of q.k: d_k, within 6 standard errors
        # (q.k has fourth moment 3 d_k^2 + 6 d_k)
        se = math.sqrt((3 * d_k**2 + 6 * d_k - d_k**2) / samples)
        assert abs(got["variance"] - d_k) < 6 * se, (d_k, got["variance"])
        p = np.exp(s[:16] - s[:16].max())
        assert got["top_weight"] == pytest.approx((p / p.sum()).max(), rel=1e-9)
        assert sum(got["histogram"]) == samples == sum(got["histogram_scaled"])
    assert fig.set(d_k=2048)["error"].startswith("d_k = 2048")


# --- chapter 06: RoPE -------------------------------------------------------------

def test_rope_matches_f_rope(figures, queue):
    fig = figures("rope")
    rng = np.random.default_rng(6)
    cases = [(0, 3), (4000, 4003), (7, 7), (100_000, 100_000), (100_000, 0),
             (0, 100_000), (99_999, 12)]
    cases += [tuple(int(x) for x in rng.integers(0, 100_001, 2)) for _ in range(5)]
    for m, n in cases:
        got = fig.set(m=m, n=n, pair=int(rng.integers(0, 32)))
        assert "error" not in got, got
        q_vec, k_vec = np.array(got["q"]), np.array(got["k"])
        assert q_vec.shape == (64,) and got["base"] == 10000
        for x, at, key in ((q_vec, m, "q_rot"), (k_vec, n, "k_rot")):
            ref = F.rope(Tensor.from_host(queue, x[None]), offset=at).value.to_host()[0]
            assert np.abs(np.array(got[key]) - ref).max() < 1e-5, (m, n, key)
        theta = 10000.0 ** (-np.arange(32) * 2 / 64)

        def turn(x, at):
            c, s = np.cos(at * theta), np.sin(at * theta)
            return np.stack([x[0::2] * c - x[1::2] * s,
                             x[0::2] * s + x[1::2] * c], 1).ravel()

        assert np.allclose(got["q_rot"], turn(q_vec, m), rtol=0, atol=1e-9)
        score = turn(q_vec, m) @ turn(k_vec, n)
        assert got["score"] == pytest.approx(score, rel=1e-9, abs=1e-9)
        assert got["score_at_origin"] == pytest.approx(q_vec @ turn(k_vec, n - m),
                                                       rel=1e-9, abs=1e-9)
        assert got["score"] == pytest.approx(got["score_at_origin"], rel=1e-6, abs=1e-9)
        if m == n:
            assert got["score"] == pytest.approx(q_vec @ k_vec, rel=1e-9)
    assert "100000" in fig.set(m=100_001)["error"]


# --- chapter 08: online softmax ---------------------------------------------------

@pytest.fixture(scope="module")
def online_attention_row():
    """The chapter's own function, taken from its source."""
    chapter = ROOT / "chapters" / "08_toward_flashattention.md"
    text = chapter.read_text(encoding="utf-8")
    source = re.search(r"^def online_attention_row\(.*?(?=^\S)", text, re.S | re.M)
    scope = {"math": math}
    exec(source.group(0), scope)
    return scope["online_attention_row"]


def test_online_softmax_tile_by_tile(figures, online_attention_row):
    fig = figures("online-softmax")
    rng = np.random.default_rng(8)
    cases = [([2.5], 1, None), ([1.0, 1.0, 1.0, 1.0], 3, None),
             ([1000.0, -1000.0, 999.0], 2, [1.0, 2.0, 3.0]),
             ([-5.0, -6.0, -4.0], 10, None)]
    for n, tile in [(12, 4), (24, 4), (17, 5), (50, 1), (9, 9)]:
        cases.append((list(np.round(rng.normal(0, 2, n), 3)), tile,
                      list(np.round(rng.normal(0, 1, n), 3))))
    for scores, tile, values in cases:
        got = fig.set(scores=", ".join(repr(float(x)) for x in scores), tile=tile,
                      values="" if values is None else " ".join(map(str, values)))
        assert "error" not in got, got
        s = np.array(scores, float)
        v = np.arange(len(s), dtype=float) if values is None else np.array(values)
        starts = range(0, len(s), tile)
        assert len(got["m"]) == len(got["r"]) == len(got["out"]) == len(starts)
        for t, start in enumerate(starts):
            seen = s[: start + tile]
            m = seen.max()
            w = np.exp(seen - m)
            assert got["m"][t] == pytest.approx(m, rel=1e-12)
            assert got["r"][t] == pytest.approx(w.sum(), rel=1e-12)
            partial = w @ v[: len(seen)] / w.sum()
            assert got["out"][t] == pytest.approx(partial, rel=1e-9, abs=1e-12)
        out, history = online_attention_row([1.0], [[x] for x in scores],
                                            [[x] for x in v], len(s), tile)
        assert np.allclose([h[0] for h in history], got["m"], rtol=1e-12)
        assert np.allclose([h[1] for h in history], got["r"], rtol=1e-12)
        assert got["out"][-1] == pytest.approx(out[0], rel=1e-9, abs=1e-12)
        p = np.exp(s - s.max())
        assert got["exact"] == pytest.approx(p @ v / p.sum(), rel=1e-9, abs=1e-12)
    assert "scores" in fig.set(scores="", tile=2)["error"]
    assert "'x'" in fig.set(scores="1, x", tile=2)["error"]


# --- every page -------------------------------------------------------------------

def test_typing_alone_updates_the_figure(figures):
    fig = figures("rope")
    before = fig.version()
    fig.root.locator('[name="m"]').fill("123")
    fig.wait(before)
    assert fig.output()["m"] == 123


def test_pages_weigh_under_budget_and_report_times(browser, site_html,
                                                   tmp_path_factory):
    """Every chapter page with a live figure, before a vocabulary is picked,
    loads under 2 MB (the files it reads); the time to the first result is
    printed. Then screenshots at 1280 and 390 px."""
    shots = pathlib.Path(os.environ.get("LIVE_SCREENSHOTS") or
                         tmp_path_factory.mktemp("live"))
    shots.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900},
                                      service_workers="block")
        files = []

        def route(r):
            if r.request.url.startswith("file:"):
                files.append(urllib.request.url2pathname(
                    urllib.parse.urlsplit(r.request.url).path))
                r.continue_()
            elif r.request.url.split(":", 1)[0] in ("data", "blob", "about"):
                r.continue_()
            else:
                r.abort("blockedbyclient")

        context.route("**/*", route)
        for name in PAGES:
            files.clear()
            fig = Figure(context, site_html, name)
            size = sum(os.path.getsize(f) for f in set(files))
            vocab = [f for f in files if "/vocab/" in f]
            print(f"\n{width}px {PAGES[name]}: {size / 1e6:.2f} MB loaded, first "
                  f"result after {fig.first_result_s:.2f} s (under load)")
            if width == 1280:
                assert size < BUDGET, f"{PAGES[name]}: {size} bytes"
                assert all(f.endswith("/vocab/course.js") for f in vocab), vocab
            overflow = fig.page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{name} at {width}px: the page scrolls sideways"
            fig.root.scroll_into_view_if_needed()
            fig.root.screenshot(path=str(shots / f"live-{name}-{width}.png"))
            if name == "bpe" and width == 1280:
                for choice in ("gpt2", "cl100k_base", "o200k_base"):
                    files.clear()
                    start = time.perf_counter()
                    fig.set(tokenizer=choice, text="hello world")
                    extra = sum(os.path.getsize(f) for f in set(files))
                    print(f"  picking {choice}: {extra / 1e6:.2f} MB more, ids after "
                          f"{time.perf_counter() - start:.2f} s")
                    assert files, f"{choice}: no vocabulary loaded"
            assert not fig.errors, fig.errors
            fig.page.close()
        context.close()


def test_widget_cells_are_collapsed(site_html):
    """The cells that build a JupyterLab figure are folded, and their toggle
    says what they build; the frame counts are not printed."""
    for name, stem in PAGES.items():
        page = (site_html / "chapters" / f"{stem}.html").read_text(encoding="utf-8")
        assert f'data-live="{name}"' in page
        assert "(show the code)" in page, stem
        assert not re.search(r"\d+ frames, \d+ kB", page), stem


# --- the build side, without a browser ----------------------------------------------

def test_course_ranks_encode_like_the_tokenizer(tool):
    """The chapter's tokenizer, exported for js-tiktoken, read back into
    tiktoken: the same ids as BPETokenizer."""
    import base64

    live = tool("live_figures")
    path = ROOT / "figures" / "01_shakespeare.bpe"
    ranks = live.course_ranks(path, pat_str="unused here")
    tokens = ranks["bpe_ranks"].split(" ")
    assert tokens[:2] == ["!", "0"]
    course = BPETokenizer.load(path)
    assert len(tokens) - 2 == course.vocab_size == 256 + len(ranks["merges"])
    enc = tiktoken.Encoding(name="course", pat_str=GPT4_SPLIT_PATTERN,
                            special_tokens={}, mergeable_ranks={base64.b64decode(t): i
                                             for i, t in enumerate(tokens[2:])})
    text = (ROOT / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")[-20_000:]
    assert enc.encode_ordinary(text) == course.encode(text)
    for i, (left, right) in enumerate(ranks["merges"]):
        assert course.decode_bytes([256 + i]) == course.decode_bytes([left, right])


def test_vendored_tarball_is_checked(tool, tmp_path, monkeypatch):
    vendor = tool("vendor_js")
    monkeypatch.setenv("NETCL_NPM_CACHE", str(tmp_path))
    monkeypatch.setitem(vendor.PINS, "base64-js", ("1.5.1", vendor.integrity_of(b"x")))
    (tmp_path / "base64-js-1.5.1.tgz").write_bytes(b"not the tarball")
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")  # refused
    with pytest.raises(vendor.VendorError, match="cannot fetch base64-js 1.5.1"):
        vendor.tarball("base64-js")
    assert not (tmp_path / "base64-js-1.5.1.tgz").exists()  # the bad file went
    with pytest.raises(vendor.VendorError, match="not pinned"):
        vendor.tarball("left-pad")


def test_place_swaps_the_player_for_the_figure(tool):
    import nbformat

    live = tool("live_figures")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("# Builds a slider\nfig", metadata={
        "tags": ["hide-input", "live-rope"]})
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="9 frames\n")]
    kept = nbformat.v4.new_code_cell("x", metadata={"tags": ["live-bpe"]})
    kept.outputs = [nbformat.v4.new_output("stream", name="stdout", text="flipbook\n")]
    nb.cells = [cell, kept]
    assert live.place(nb, {"rope"}) == ["rope"]
    (out,) = nb.cells[0].outputs
    assert 'data-live="rope"' in out["data"]["text/html"]
    prompt = nb.cells[0].metadata["mystnb"]["code_prompt_show"]
    assert prompt.startswith("Builds a slider")
    assert nb.cells[1].outputs[0]["text"] == "flipbook\n"  # not shown: it stays
    nb.cells[1].metadata["tags"] = ["live-nope"]
    with pytest.raises(ValueError, match="live-nope"):
        live.place(nb, {"rope"})
