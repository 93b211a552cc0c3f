"""The whole course's time budget: every chapter checked by nbval, as
``make test`` checks it, one chapter at a time, each in a fresh kernel.

For each chapter the table gives the wall-clock seconds and the CPU
seconds (user + system) of the pytest process and of everything it waited
for: the notebook's kernel, and PoCL's worker threads inside it. On a quiet
machine the wall time is what a reader waits. On a shared one the wall time
also counts the time spent waiting for a core, and the CPU time is the
steadier number: it counts the work, whoever else runs. The table names the
machine (CPU model, cores, the OpenCL implementation the chapters run on)
and the load average before and after, so a reader can tell which it was.

The budget (issue 39): the whole course within 18 minutes on a 2-core
machine with Debian's PoCL, no chapter over 6 minutes, and every cell that
runs longer than about 20 s shows one progress bar, stored once. Chapters
over the chapter budget are marked; the last column lists each cell that
took 20 s or more (pytest's ``--durations``, nbval numbering code cells
from 0) and whether its stored output holds one progress bar drawn at its
start and end only ("bar") or not ("NO BAR").

The notebooks run on copies in a temporary folder (``chapters/`` copied,
``data/`` linked, an empty ``figures/``), so the stored outputs and figures
stay untouched.

    python bench/course.py                    # every chapter
    python bench/course.py 11 12 13           # those chapters only
"""

import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER_BUDGET = 6 * 60         # seconds, one chapter
COURSE_BUDGET = 18 * 60         # seconds, the whole course
SLOW_CELL = 20                  # seconds: a cell this slow shows a progress bar
NBVAL = ["--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", "chapters/sanitize.cfg"]


def machine():
    """One line: CPU model, cores, and the OpenCL device the chapters use."""
    model = platform.processor() or platform.machine()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count()
    try:
        from netcl_lite.core.device import manager
        device = manager.default("auto").queue.device
        version = device.platform.version.split("  ")[0].split(",")[0]
        opencl = f"{version.strip()}, device {device.name.strip()}"
    except Exception as error:                 # no OpenCL: say so, still time
        opencl = f"no OpenCL device ({error})"
    return f"{model}, {cores} cores; OpenCL: {opencl}"


def one_bar(cell):
    """Whether a stored code cell shows one tqdm bar: at most two states
    (its start and its end: ``mininterval=float("inf")``) on one line, as
    tools/execute_chapters.py stores it (its last state only)."""
    text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])
                   if o.get("name") == "stderr")
    bars = [line for line in re.split(r"[\r\n]", text) if "|" in line
            and re.search(r"\d+%\|", line)]
    return 1 <= len(bars) <= 2 and text.rstrip("\n").count("\n") == 0


def slow_cells(output, path):
    """[(code cell number, seconds, shows one bar)] for the cells pytest's
    --durations reported, from the stored notebook."""
    code = [c for c in json.loads(path.read_text())["cells"]
            if c["cell_type"] == "code"]
    slow = []
    for seconds, number in re.findall(r"([\d.]+)s call\s+\S+::Cell (\d+)",
                                      output):
        slow.append((int(number), float(seconds), one_bar(code[int(number)])))
    return sorted(slow)


def run_chapter(path, cwd, timeout=1800):
    """(passed, wall seconds, CPU seconds, slow cells) of nbval on one
    notebook."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--durations=0", f"--durations-min={SLOW_CELL}",
               *NBVAL, str(path.relative_to(cwd))]
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
    deadline = start + timeout
    while True:                       # wait4 gives the CPU time of the child
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            child.kill()
            pid, status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.2)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    output = child.stdout.read().decode(errors="replace")
    if child.returncode:
        print(output[-3000:], file=sys.stderr)
    return (child.returncode == 0, wall, usage.ru_utime + usage.ru_stime,
            slow_cells(output, path))


def run_course(chapters=()):
    """[(notebook name, passed, wall s, CPU s, slow cells)] for
    chapters/NN_*.ipynb, or only those whose number is in ``chapters``."""
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
                if chapters and nb.name[:2] not in chapters:
                    continue
                rows.append((nb.name, *run_chapter(nb, tmp)))
                print(f"{nb.name}: {rows[-1][2]:.0f} s wall, "
                      f"{rows[-1][3]:.0f} s CPU", file=sys.stderr, flush=True)
        finally:
            if old is None:
                os.environ.pop("PYTHONPATH")
            else:
                os.environ["PYTHONPATH"] = old
    return rows


def table(rows, load=None):
    """Markdown: one row per chapter, then the total, against the budget."""
    lines = ["| chapter | nbval | wall s | CPU s | cells over 20 s |",
             "|---|---|---|---|---|"]
    for name, passed, wall, cpu, slow in rows:
        over = " (over 6 min)" if wall > CHAPTER_BUDGET else ""
        cells = "; ".join(f"cell {n}: {s:.0f} s, {'bar' if bar else 'NO BAR'}"
                          for n, s, bar in slow)
        lines.append(f"| {name} | {'passed' if passed else 'FAILED'} | "
                     f"{wall:.1f}{over} | {cpu:.1f} | {cells} |")
    wall = sum(r[2] for r in rows)
    cpu = sum(r[3] for r in rows)
    over = " (over 18 min)" if wall > COURSE_BUDGET else ""
    lines.append(f"| all {len(rows)} | {sum(r[1] for r in rows)} passed | "
                 f"{wall:.1f}{over} | {cpu:.1f} | |")
    if load:
        lines.append(f"\nload average (1 min) before and after: "
                     f"{load[0]:.2f}, {load[1]:.2f}")
    return "\n".join(lines)


def main(argv):
    chapters = [a.zfill(2) for a in argv]
    print(f"{time.strftime('%Y-%m-%d')}, {machine()}\n")
    before = os.getloadavg()[0]
    rows = run_course(chapters)
    print(table(rows, (before, os.getloadavg()[0])))
    return 0 if all(r[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
