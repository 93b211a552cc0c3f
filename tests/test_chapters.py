"""The course's notebooks: twins in sync, outputs stored, the document's
numbers present, exercises checked, a figure per chapter.

nbval itself (``make test`` passes ``--nbval chapters``) re-executes every
notebook and compares the fresh outputs with the stored ones.
"""

import importlib
import inspect
import json
import pathlib
import sys

import jupytext
import nbformat
import pytest

from netcl_lite.core.kernel_file import BufferOverrun, KernelBuildError

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


# Exercises in OpenCL C: the reader edits a stub chapters/exercises/chNN_*.cl;
# the reference answer of the same name is in chapters/solutions/, and the
# chapter's checks module has one check whose ``path`` defaults to the stub.
KERNEL_STUBS = sorted((CHAPTERS / "exercises").glob("ch[0-9][0-9]_*.cl"))


@pytest.fixture
def kernel_check(request, monkeypatch):
    """The check of a kernel exercise, run from chapters/ as a chapter is."""
    stub = request.param
    monkeypatch.syspath_prepend(str(CHAPTERS))
    monkeypatch.chdir(CHAPTERS)
    checks = importlib.import_module(f"checks.{stub.name[:4]}")
    wanted = f"exercises/{stub.name}"
    found = [f for name, f in vars(checks).items() if name.startswith("check_")
             and "path" in inspect.signature(f).parameters
             and inspect.signature(f).parameters["path"].default == wanted]
    assert len(found) == 1, f"checks/{stub.name[:4]}.py: one check of {wanted}"
    yield stub.name, found[0]
    sys.modules.pop(f"checks.{stub.name[:4]}")


def test_kernel_exercises_pair_up():
    """Every stub has a reference answer and the other way round; there are
    at least two, and each sits in a chapter that poses it."""
    solutions = sorted((CHAPTERS / "solutions").glob("ch[0-9][0-9]_*.cl"))
    assert len(KERNEL_STUBS) >= 2, KERNEL_STUBS
    assert [p.name for p in KERNEL_STUBS] == [p.name for p in solutions]
    for stub in KERNEL_STUBS:
        twin = notebook(stub.name[2:4]).with_suffix(".md").read_text()
        assert f'"exercises/{stub.name}")' in twin, f"no chapter poses {stub.name}"


@pytest.mark.parametrize("kernel_check", KERNEL_STUBS, ids=lambda p: p.stem,
                         indirect=True)
def test_kernel_solution_passes(kernel_check):
    """The reference kernel passes its check (small shapes, no timing: this
    one also runs on Oclgrind, which checks every access)."""
    name, check = kernel_check
    check(f"solutions/{name}", time=False)


@pytest.mark.parametrize("kernel_check", KERNEL_STUBS, ids=lambda p: p.stem,
                         indirect=True)
def test_kernel_stub_fails(kernel_check):
    """The stub as the reader finds it does not pass: it fails to build, is
    wrong, or writes past its buffers."""
    name, check = kernel_check
    with pytest.raises((AssertionError, KernelBuildError, BufferOverrun)):
        check(f"exercises/{name}", time=False)


@pytest.mark.parametrize("kernel_check", KERNEL_STUBS, ids=lambda p: p.stem,
                         indirect=True)
def test_kernel_check_times_the_solution(kernel_check, capsys):
    """With timing, the check prints both device times and returns their
    ratio."""
    name, check = kernel_check
    ratio = check(f"solutions/{name}")
    assert 0 < ratio < float("inf")
    assert "the library's" in capsys.readouterr().out
