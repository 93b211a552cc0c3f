"""No control characters inside the chapters' math.

A backslash that a string or an editor reads as an escape turns LaTeX into
control characters: ``\\text`` becomes a TAB and "ext", ``\\frac`` a form
feed and "rac", ``\\right`` a carriage return and "ight". KaTeX and MathJax
then show "ext{loss}" or nothing at all, and the .md twin and the notebook
both carry the damage. This test reads the math of every chapter's markdown,
in the .md twin and in the notebook's markdown cells, and fails on any
character below U+0020 other than a line break.
"""

import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SOURCES = sorted(CHAPTERS.glob("[0-9][0-9]_*.md")) + [CHAPTERS / "notation.md"]
NOTEBOOKS = sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb"))

FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)   # code blocks
INLINE_CODE = re.compile(r"`[^`\n]*`")
DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$", re.S)
BAD = re.compile(r"[\x00-\x09\x0b-\x1f]")    # every control character but \n


def math_spans(markdown):
    """The text inside $...$ and $$...$$ of a markdown source, code left out.

    >>> math_spans("a $x_1$ b `$no$` $$\\n y \\n$$")
    ['\\n y \\n', 'x_1']
    """
    text = INLINE_CODE.sub("", FENCE.sub("", markdown))
    spans = DISPLAY.findall(text)
    text = DISPLAY.sub("", text)
    return spans + [s for s in INLINE.findall(text) if "\n\n" not in s]


def control_characters(markdown):
    """(repr of the character, the math around it) for each one found."""
    return [(repr(m.group()), span.strip(" \n")[:60])
            for span in math_spans(markdown) for m in BAD.finditer(span)]


def test_the_finder_sees_a_tab_and_a_form_feed():
    broken = "spread $|\text{loss}|$ and $$\frac{a}{b}$$, code `\t` kept"
    assert control_characters(broken) == [("'\\x0c'", "\x0crac{a}{b}"),
                                           ("'\\t'", "|\text{loss}|")]
    assert control_characters(r"fine: $|\text{loss}|$ and $$\frac{a}{b}$$") == []


def test_the_finder_skips_code_but_not_math_in_a_list():
    assert control_characters("```python\nx = '$\t$'\n```\n") == []
    assert control_characters("- the $\x08eta_1$ of AdamW\n") == [
        ("'\\x08'", "\x08eta_1")]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_control_characters_in_the_math_of_a_twin(path):
    found = control_characters(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: control characters in math: {found}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_control_characters_in_the_math_of_a_notebook(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            source = cell["source"]
            text = "".join(source) if isinstance(source, list) else source
            found += [(i, *hit) for hit in control_characters(text)]
    assert not found, f"{path.name}: control characters in math (cell, char, " \
        f"math): {found}"
