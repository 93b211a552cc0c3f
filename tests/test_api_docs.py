"""The reference is generated from the library (tools/reference.py): every
name a package exports in __all__ gets an entry, and docs/api.md holds the
prose around the entries, not a second list of names. Importing the library
touches no OpenCL, so the reference builds without a device.

tests/site/test_reference.py checks the built pages."""

import importlib
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import reference  # noqa: E402

DOC = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
EXPORTING = ["netcl_lite.autograd", "netcl_lite.functional", "netcl_lite.nn", "netcl_lite.optim",
             "netcl_lite.text", "netcl_lite.viz", "netcl_lite.interp"]
PAGES = {page: package for page, package, _ in reference.PACKAGES}


@pytest.fixture(scope="module")
def pages():
    return reference.pages(REPO)


def directives(text):
    """{where::name} of every autodoc entry on a generated page."""
    return set(re.findall(r"^\.\. auto(?:class|function|data):: (\S+)$", text,
                          re.M))


@pytest.mark.parametrize("package", EXPORTING)
def test_every_exported_name_has_an_entry(package, pages):
    names = importlib.import_module(package).__all__
    page = next(p for p, pkg in PAGES.items() if pkg == package)
    have = directives(pages[f"reference/{page}.md"])
    missing = [n for n in names if f"{package}::{n}" not in have]
    assert not missing, f"{package}: no entry for {missing}"
    extra = sorted(have - {f"{package}::{n}" for n in names})
    assert not extra, f"{package}: entries not in __all__: {extra}"


@pytest.mark.parametrize("page", ["core", "inference"])
def test_a_module_without_all_shows_its_top_level_names(page, pages):
    have = directives(pages[f"reference/{page}.md"])
    assert have, page
    for where in {w.split("::")[0] for w in have}:
        module = importlib.import_module(where)
        text = pathlib.Path(module.__file__).read_text(encoding="utf-8")
        defined = set(re.findall(r"^(?:def|class) ([A-Za-z]\w*)", text, re.M))
        shown = {w.split("::")[1] for w in have if w.startswith(where + "::")}
        assert defined <= shown, f"{where}: {sorted(defined - shown)}"
        assert not any(n.startswith("_") for n in shown)
    if page == "core":
        assert "netcl_lite.core.device::manager" in have
        assert "netcl_lite.core.tensor::Tensor" in have


def test_the_top_level_all_is_the_list_of_pages():
    import netcl_lite
    assert set(netcl_lite.__all__) == {p.rsplit(".", 1)[1] for p in PAGES.values()}


@pytest.mark.parametrize("page", ["core", "inference"])
def test_every_module_of_a_package_without_all_has_its_section(page):
    """Each module of core and inference is listed in reference.PACKAGES,
    so a new one (core/roofline.py) cannot be left off its page."""
    _, package, modules = next(entry for entry in reference.PACKAGES
                               if entry[0] == page)
    folder = REPO / package.replace(".", "/")
    files = {f.stem for f in folder.glob("*.py") if f.stem != "__init__"}
    assert files == set(modules), sorted(files ^ set(modules))


def test_every_package_has_a_page_and_a_section_of_api_md(pages):
    assert set(PAGES) == {"core", "autograd", "functional", "nn", "inference",
                          "optim", "text", "viz", "interp"}
    for page, package in PAGES.items():
        text = pages[f"reference/{page}.md"]
        heading = text.splitlines()[0]
        assert heading.startswith("# ") and f"`{package}`" in heading, heading
    assert set(reference.api_sections(REPO)) == set(PAGES.values()) | {""}


def test_api_md_keeps_no_second_list_of_names():
    """Tables of names drift from the code: the names are the __all__s'."""
    rows = [line for line in DOC.splitlines() if re.match(r"\|\s*`", line)]
    assert not rows, rows[:3]


def test_worked_examples_come_with_the_files_that_define_them(pages):
    text = pages["reference/functional.md"]
    # the entry of F.swiglu comes after its file's docstring (its example)
    assert text.index(".. automodule:: netcl_lite.functional.swiglu") < text.index(
        ".. autofunction:: netcl_lite.functional::swiglu")


def test_docstring_chapters_become_links():
    docs = {1: "chapters/01_bpe", 9: "chapters/09_decoder", 11: "chapters/11_a",
            12: "chapters/12_b"}
    link = reference.link_chapters
    assert link("(chapter 09)", docs) == "(:doc:`chapter 09 </chapters/09_decoder>`)"
    assert link("Chapter 1 builds it", docs) == (
        ":doc:`Chapter 1 </chapters/01_bpe>` builds it")
    assert link("chapters 11 and 12", docs) == (
        "chapters :doc:`11 </chapters/11_a>` and :doc:`12 </chapters/12_b>`")
    assert link("chapter 13", docs) == "chapter 13"  # no such chapter
    assert link("chapter 09", docs, role="{doc}") == (
        "{doc}`chapter 09 </chapters/09_decoder>`")


def test_docstrings_are_read_as_written():
    rest = reference.as_rest([
        "Shapes:", "", "    x   (B, D)", "    out (B, N)", "",
        "draw(fig, **values), <|eot_id|>, ``trace()``s (chapter 09).",
        ">>> f(*args)", "3"], {9: "chapters/09_x"})
    assert rest[:6] == ["Shapes:", "", "::", "", "    x   (B, D)", "    out (B, N)"]
    assert rest[7] == ("draw(fig, \\*\\*values), <\\|eot_id\\|>, ``trace()``\\ s "
                       "(:doc:`chapter 09 </chapters/09_x>`).")
    assert rest[8:] == [">>> f(*args)", "3"]  # a doctest stays as it runs


@pytest.fixture(scope="module")
def linker():
    return reference.Linker()


def test_chapter_code_that_names_an_entry_links_to_it(linker):
    text = ("Call `F.softmax(x, causal=True)`, then "
            "`BPETokenizer.train_from_iterator` and `encode_dialog`.\n")
    assert linker(text) == (
        "Call {py:obj}`F.softmax(x, causal=True) <netcl_lite.functional.softmax>`,"
        " then {py:obj}`BPETokenizer.train_from_iterator "
        "<netcl_lite.text.BPETokenizer.train_from_iterator>` and "
        "{py:obj}`encode_dialog <netcl_lite.text.ChatFormat.encode_dialog>`.\n")
    assert "netcl_lite.core.tensor.Tensor.from_host" in linker(
        "`Tensor.from_host(queue, a)`")
    assert "netcl_lite.nn.DecoderLM" in linker("a `DecoderLM`")


@pytest.mark.parametrize("text", [
    "`softmax` as a word",             # a bare op: the chapters write F.softmax
    "`save` and `step`",               # methods of several classes
    "`vocab_size`",                    # a field, not a method
    "[`F.add`](../x.py)",              # already a link
    "{py:obj}`F.add`",                 # already a role
    "```python\nF.add(a, b)\n`F.add`\n```\n",  # a code block
    "## `F.add` in a heading",
    "`F.no_such_op`",
    "`../netcl_lite/text/train.py`",
])
def test_other_code_is_left_alone(linker, text):
    assert linker(text) == text


def test_importing_netcl_lite_touches_no_opencl():
    """Every module of the package imports with OpenCL's entry points made
    to fail: autodoc (and `import netcl_lite`) needs no device."""
    script = r"""
import importlib, pkgutil, pyopencl as cl
def refuse(*a, **k):
    raise AssertionError("OpenCL touched on import")
for name in ("get_platforms", "Context", "CommandQueue", "create_some_context",
             "Program", "Buffer"):
    setattr(cl, name, refuse)
import netcl_lite
names = [m.name for m in pkgutil.walk_packages(netcl_lite.__path__, "netcl_lite.")]
for name in names:
    importlib.import_module(name)
from netcl_lite.core.device import manager
print(len(names), "modules;", "devices:", len(manager._cache))
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    count = int(proc.stdout.split()[0])
    assert count >= 40, proc.stdout
    assert proc.stdout.strip().endswith("devices: 0"), proc.stdout
