"""Execute chapter twins and store the outputs: ``python tools/execute_chapters.py
[chapters/03_*.md ...]`` (default: every chapter).

The MyST twin is the file authors edit. This script runs it top to bottom in
a fresh kernel, writes the .ipynb with outputs, then rewrites the twin from
the notebook so the two hold exactly the same cells.
"""

import pathlib
import subprocess
import sys
import time

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
JUPYTEXT = [sys.executable, "-m", "jupytext"]


def as_a_terminal_shows(text):
    """A stream's text as a terminal leaves it: each "\\r" returns to the
    start of its line, so only what was written after the last one stays.

    >>> as_a_terminal_shows("\\rtrain:   0%|\\rtrain: 100%|\\n")
    'train: 100%|\\n'
    """
    return "\n".join(line.rsplit("\r", 1)[-1] if line.strip("\r") else ""
                     for line in text.split("\n"))


def one_line_per_bar(outputs):
    """Consecutive stream outputs of one name joined, as Jupyter shows them,
    and carriage returns resolved: a progress bar is stored as its last
    state, one line, not one output per update."""
    kept = []
    for out in outputs:
        if (out.output_type == "stream" and kept
                and kept[-1].output_type == "stream"
                and kept[-1].name == out.name):
            kept[-1].text += out.text
        else:
            kept.append(out)
    for out in kept:
        if out.output_type == "stream":
            out.text = as_a_terminal_shows(out.text)
    return [out for out in kept
            if out.output_type != "stream" or out.text.strip()]


def tidy(ipynb):
    """Stable cell ids, no execution timestamps, and one line per progress
    bar, so a re-run only changes the diff where an output changed."""
    nb = nbformat.read(ipynb, as_version=4)
    for i, cell in enumerate(nb.cells):
        cell.id = f"{ipynb.stem[:2]}-{i:03d}"
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = one_line_per_bar(cell.outputs)
    nbformat.write(nb, ipynb)


def execute(md):
    start = time.perf_counter()
    subprocess.run([*JUPYTEXT, "--quiet", "--to", "ipynb", "--set-kernel",
                    "python3", "--execute", str(md)], check=True)
    tidy(md.with_suffix(".ipynb"))
    subprocess.run([*JUPYTEXT, "--quiet", "--to", "md:myst",
                    str(md.with_suffix(".ipynb"))], check=True)
    return time.perf_counter() - start


def main(paths):
    mds = [pathlib.Path(p) for p in paths] or sorted(
        (ROOT / "chapters").glob("[0-9][0-9]_*.md"))
    total = 0.0
    for md in mds:
        seconds = execute(md)
        total += seconds
        print(f"{md.name}: {seconds:.1f} s")
    print(f"total: {total:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
