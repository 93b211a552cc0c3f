"""SmolLM2 in memory: VmRSS after from_gguf and generate(max_new_tokens=32),
over VmRSS after the imports and the device, at most 350 MB (float32
weights alone would be 540 MB, a cache of 8192 positions 377 MB), with the
file's memory map released. Measured in a fresh process by
``bench/real_model.py --memory``, which prints the numbers it checks."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_smollm2_loads_and_generates_within_350_mb(smollm2_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "real_model.py"), "--memory",
         "--path", str(smollm2_path)], capture_output=True, text=True,
        timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    line = done.stdout.strip().splitlines()[-1]
    grown = int(re.search(r"\+(\d+) MB", line).group(1))
    assert "32 made" in line and line.endswith("the file mapped: no"), line
    assert 0 < grown <= 350, line
