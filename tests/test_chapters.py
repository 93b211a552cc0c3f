"""The course's notebooks: twins in sync, outputs stored, the document's
numbers present, exercises checked, a figure per chapter.

nbval itself (``make test`` passes ``--nbval chapters``) re-executes every
notebook and compares the fresh outputs with the stored ones.
"""

import importlib
import json
import pathlib
import sys

import jupytext
import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb"))
APPENDIX_FROM = 90  # chapters 00, 01, ... count up; appendices are 90 and above
REGISTRY = json.loads((ROOT / "tests" / "document_numbers.json").read_text())


def notebook(number):
    (path,) = [p for p in NOTEBOOKS if p.name.startswith(number + "_")]
    return path


def stored_text(path):
    """Every text output of a notebook, as one string."""
    parts = []
    for cell in nbformat.read(path, as_version=4).cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_chapters_count_up_from_00():
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    main = [n for n in numbers if n < APPENDIX_FROM]
    assert len(main) >= 10, f"the course has chapters 00-09 at least: {numbers}"
    assert main == list(range(len(main))), f"a chapter number is missing: {numbers}"
    assert len(set(numbers)) == len(numbers), f"a number is used twice: {numbers}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_twin_holds_the_same_cells(path):
    twin = path.with_suffix(".md")
    assert twin.exists(), f"{path.name} has no text twin"

    def cells(nb):
        return [(c.cell_type, c.source.strip()) for c in nb.cells]

    assert cells(jupytext.read(path)) == cells(jupytext.read(twin)), (
        f"{path.name} and {twin.name} differ: edit the twin, then run "
        "tools/execute_chapters.py"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_and_a_figure_are_stored(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code), (
        f"{path.name} is not fully executed"
    )
    images = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} shows no figure"
    assert list((ROOT / "figures").glob(path.name[:2] + "_*.png")), (
        f"no figures/{path.name[:2]}_*.png"
    )


@pytest.mark.parametrize("entry", REGISTRY, ids=lambda e: e["printed"])
def test_document_number_is_in_the_stored_output(entry):
    assert entry["printed"] in stored_text(notebook(entry["chapter"])), entry


SOLUTIONS = sorted((CHAPTERS / "solutions").glob("ch[0-9][0-9].py"))


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solutions_pass_their_checks_and_wrong_answers_fail(path, monkeypatch):
    monkeypatch.syspath_prepend(str(CHAPTERS))
    monkeypatch.chdir(CHAPTERS)
    checks = importlib.import_module(f"checks.{path.stem}")
    solutions = importlib.import_module(f"solutions.{path.stem}")
    names = sorted(n for n in vars(solutions) if n.startswith("exercise_"))
    assert 2 <= len(names) <= 4, names
    for name in names:
        check = getattr(checks, "check_" + name.removeprefix("exercise_"))
        check(getattr(solutions, name))
        with pytest.raises(AssertionError):
            check(lambda *args, **kwargs: None)
    sys.modules.pop(f"checks.{path.stem}")
    sys.modules.pop(f"solutions.{path.stem}")


def test_every_chapter_has_solutions():
    """Main chapters have exercises; an appendix (90 and above) may."""
    have = [p.stem[2:] for p in SOLUTIONS]
    main = [p.name[:2] for p in NOTEBOOKS if int(p.name[:2]) < APPENDIX_FROM]
    assert [n for n in have if int(n) < APPENDIX_FROM] == main
    assert set(have) <= {p.name[:2] for p in NOTEBOOKS}
