"""Section 6 of the chapter document runs unchanged (netcl -> netcl_lite)."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "examples" / "section6.py"
DOCUMENT_LINE = "Attention output shape: (2, 16, 256)"


def run_program(python, cwd, env=None):
    done = subprocess.run([python, str(PROGRAM)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_section6_prints_the_documents_shape(tmp_path):
    out = run_program(sys.executable, tmp_path)
    assert DOCUMENT_LINE in out.splitlines()
    assert "Reconstructed text: Hello world!" in out.splitlines()
