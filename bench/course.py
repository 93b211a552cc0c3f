"""The whole course's execution time (`make bench`): every chapter notebook
run top to bottom in a fresh kernel, as a reader would.

The notebooks run on copies in a temporary folder (``chapters/`` copied,
``data/`` linked, an empty ``figures/``), so the stored outputs and figures
stay untouched.

    python bench/course.py             # prints a markdown table
"""

import os
import pathlib
import shutil
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_notebook(path, cwd, timeout=1200):
    """Seconds to execute one notebook (raises if a cell fails)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            extra_arguments=["--log-level=ERROR"],
                            resources={"metadata": {"path": str(cwd)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def run_course():
    """[(chapter file name, seconds)] for every chapters/NN_*.ipynb."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        shutil.copytree(ROOT / "chapters", tmp / "chapters",
                        ignore=shutil.ignore_patterns(
                            ".ipynb_checkpoints", "__pycache__", "kernel-*"))
        (tmp / "data").symlink_to(ROOT / "data")
        (tmp / "figures").mkdir()
        old = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), old]))
        try:
            for nb in sorted((tmp / "chapters").glob("[0-9][0-9]_*.ipynb")):
                rows.append((nb.name, run_notebook(nb, tmp / "chapters")))
        finally:
            if old is None:
                os.environ.pop("PYTHONPATH")
            else:
                os.environ["PYTHONPATH"] = old
    return rows


def table(rows):
    lines = ["| chapter | s |", "|---|---|"]
    lines += [f"| {name} | {seconds:.1f} |" for name, seconds in rows]
    lines.append(f"| whole course | {sum(s for _, s in rows):.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(print(table(run_course())))
