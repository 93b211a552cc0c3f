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


def tidy(ipynb):
    """Stable cell ids and no execution timestamps, so a re-run only changes
    the diff where an output changed."""
    nb = nbformat.read(ipynb, as_version=4)
    for i, cell in enumerate(nb.cells):
        cell.id = f"{ipynb.stem[:2]}-{i:03d}"
        cell.metadata.pop("execution", None)
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
