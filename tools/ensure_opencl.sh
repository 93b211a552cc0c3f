#!/usr/bin/env bash
# Make sure some OpenCL device here can build a kernel (make install runs it):
#   tools/ensure_opencl.sh PYTHON
#
# It changes nothing outside the environment of PYTHON, for root too: no
# system package, no root. pip's PoCL (pyopencl[pocl]) is PoCL 3.0 with
# LLVM 14, which cannot compile for CPUs newer than LLVM 14 (AMD Zen 5,
# family 1Ah). When the doctor finds no device that compiles, this installs
# Intel's OpenCL CPU runtime from PyPI into the environment (the [intel]
# extra, about 700 MB, runs on AMD CPUs too), and says how to get the faster
# system option instead: Debian's PoCL, which `make system-deps` installs
# when you ask for it (tools/system/debian_packages.sh).
# It fails, printing the doctor's report, only when no device compiles even
# then.
set -euo pipefail
PY=${1:?usage: tools/ensure_opencl.sh PYTHON}
cd "$(dirname "$0")/.."

say() { echo "ensure_opencl: $*" >&2; }
works() { "$PY" -m netcl_lite.doctor --check; }

if works; then
    exit 0
fi
env_dir=$("$PY" -c 'import sys; print(sys.prefix)')
say "no OpenCL device here can build a kernel (the doctor's reasons are above)."
say "Installing Intel's OpenCL CPU runtime into $env_dir: pip install -e \".[intel]\""
say "(about 700 MB, no root needed; the course then runs on it)."
say "Faster, if you may install system packages: Debian's PoCL, a newer LLVM."
say "  make system-deps   (or, as root: apt-get install pocl-opencl-icd)"
"$PY" -m pip install --quiet -e ".[intel]"
if works; then
    say "Intel's OpenCL CPU runtime works."
    exit 0
fi
"$PY" -m netcl_lite.doctor || true
say "no OpenCL implementation could be installed that compiles here (see above)."
exit 1
