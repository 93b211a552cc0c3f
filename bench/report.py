"""`make bench`: one run, one report. Prints markdown tables and writes
``figures/bench_kernels.png``.

    python bench/report.py [--no-course] [--no-tokenizer] [--no-implementations]

- kernels (bench/kernels.py): matmul GFLOP/s and attention ms / memory next
  to numpy and torch, chapter 09's training step and KV-cache generation
  against a torch twin (bench/train_step.py), kernel build cold and warm
- tokenizer (bench/tokenizer.py, when present): its own table
- each OpenCL implementation found here (bench/implementations.py)
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
    """Two panels, matmul and attention; legends below the axes (never over
    the data), text sized for a page-wide figure."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 11})
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 5.2))
    mm = res["matmul"] + [{"n": "x".join(map(str, r["shape"])), **r}
                          for r in res.get("shapes", [])]
    libs = [k for k in ("netcl_lite", "numpy", "torch") if k in mm[0]]
    width = 0.8 / len(libs)
    for i, lib in enumerate(libs):
        xs = [j + i * width for j in range(len(mm))]
        left.bar(xs, [r.get(lib, 0) for r in mm], width, label=lib)
    left.set_xticks([j + width * (len(libs) - 1) / 2 for j in range(len(mm))])
    left.set_xticklabels([f"n={r['n']}" if isinstance(r["n"], int) else
                          r["n"].replace("x", "\nx", 1) for r in mm], fontsize=9)
    left.set_ylabel("GFLOP/s (float32)")
    left.set_title("matmul: n x n, and M x K x N of chapter 09")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3,
                frameon=False)

    att = res["attention"]
    labels = {"naive": "netcl_lite naive (4 kernels)",
              "fused": "netcl_lite fused", "numpy": "numpy (S x S)",
              "torch": "torch SDPA"}
    for impl, label in labels.items():
        pts = [(r["S"], r["ms"][impl]) for r in att if impl in r["ms"]]
        if impl == "fused" and res.get("long"):
            pts.append((res["long"]["S"], res["long"]["ms"]))
        if impl == "torch":
            extra = [(r["S"], r["ms"]["torch"])
                     for r in res.get("attention_torch", []) if r["S"] > pts[-1][0]]
            pts += extra if pts else []
        if pts:
            right.plot(*zip(*pts), marker="o", label=label)
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("sequence length S")
    right.set_ylabel("ms (forward)")
    right.set_title("causal attention, H = 8, d = 64")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                 frameon=False)
    fig.suptitle(res["machine"].split("; OpenCL")[0], fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, dpi=120)
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
    if "--no-implementations" not in argv:
        import implementations
        print()
        implementations.main([])
    if "--no-course" not in argv:
        import course
        print("\nThe whole course, every chapter notebook executed:\n")
        print(course.table(course.run_course()))
    print(f"\n(bench run: {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
