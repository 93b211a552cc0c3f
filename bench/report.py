"""`make bench`: one run, one report. Prints markdown tables and writes
``figures/bench_kernels.png``.

    python bench/report.py [--no-course] [--no-tokenizer]

- kernels (bench/kernels.py): matmul GFLOP/s and attention ms / memory next
  to numpy and torch, kernel build cold and warm
- tokenizer (bench/tokenizer.py, when present): its own table
- the whole course (bench/course.py): every chapter notebook executed
"""

import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import kernels  # noqa: E402

FIGURE = ROOT / "figures" / "bench_kernels.png"


def tokenizer_table():
    """bench/tokenizer.py's markdown output, or None when it is absent."""
    script = ROOT / "bench" / "tokenizer.py"
    if not script.exists():
        return None
    res = subprocess.run([sys.executable, str(script)], capture_output=True,
                         text=True, cwd=ROOT)
    if res.returncode:
        return f"(bench/tokenizer.py failed: {res.stderr.strip()[-300:]})"
    return res.stdout.strip()


def plot(res, path=FIGURE):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    mm = res["matmul"]
    libs = [k for k in ("netcl_lite", "numpy", "torch") if k in mm[0]]
    width = 0.8 / len(libs)
    for i, lib in enumerate(libs):
        xs = [j + i * width for j in range(len(mm))]
        left.bar(xs, [r[lib] for r in mm], width, label=lib)
    left.axhline(res["peak"], color="gray", ls="--", label="peak estimate")
    left.set_xticks([j + width * (len(libs) - 1) / 2 for j in range(len(mm))])
    left.set_xticklabels([f"n = {r['n']}" for r in mm])
    left.set_ylabel("GFLOP/s (float32)")
    left.set_title("matmul, n x n")
    left.legend(fontsize=8)

    att = res["attention"]
    labels = {"naive": "netcl_lite 3 kernels", "fused": "netcl_lite fused",
              "numpy": "numpy (S x S)", "torch": "torch SDPA"}
    for impl, label in labels.items():
        pts = [(r["S"], r["ms"][impl]) for r in att if impl in r["ms"]]
        if pts:
            right.plot(*zip(*pts), marker="o", label=label)
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("sequence length S")
    right.set_ylabel("ms (forward)")
    right.set_title("causal attention, H = 8, d = 64")
    right.legend(fontsize=8)
    fig.suptitle(res["machine"], fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv):
    start = time.perf_counter()
    res = kernels.run_all()
    print(kernels.tables(res))
    print(f"\nFigure: {plot(res).relative_to(ROOT)}")
    if "--no-tokenizer" not in argv:
        table = tokenizer_table()
        if table:
            print("\nTokenizer (bench/tokenizer.py):\n")
            print(table)
    if "--no-course" not in argv:
        import course
        print("\nThe whole course, every chapter notebook executed:\n")
        print(course.table(course.run_course()))
    print(f"\n(bench run: {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
