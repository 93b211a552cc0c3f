#!/usr/bin/env bash
# Make sure some OpenCL device here can build a kernel; install one if not.
#   tools/ensure_opencl.sh PYTHON      (make install runs it)
#
# pip's PoCL (pyopencl[pocl]) is PoCL 3.0 with LLVM 14, which cannot compile
# for CPUs newer than LLVM 14 (AMD Zen 5, family 1Ah). When the doctor finds
# no device that compiles, this installs, in order:
#   1. Debian's PoCL (pocl-opencl-icd, a newer LLVM) when apt-get can run as
#      root, or through sudo without a password;
#   2. otherwise Intel's OpenCL CPU runtime from PyPI (the [intel] extra,
#      about 700 MB, no root), which netcl_lite finds in the environment.
# It fails, printing the doctor's report, only when neither gives a device.
set -euo pipefail
PY=${1:?usage: tools/ensure_opencl.sh PYTHON}
cd "$(dirname "$0")/.."

works() { "$PY" -m netcl_lite.doctor --check; }

if works; then
    exit 0
fi
echo "ensure_opencl: no OpenCL device here can build a kernel; installing one" >&2
apt_install() {
    if ! command -v apt-get >/dev/null; then
        return 1
    fi
    if [ "$(id -u)" = 0 ]; then
        apt-get update && apt-get install -y --no-install-recommends "$@"
    elif sudo -n true 2>/dev/null; then
        sudo apt-get update
        sudo apt-get install -y --no-install-recommends "$@"
    else
        return 1
    fi
}
if apt_install pocl-opencl-icd && works; then
    echo "ensure_opencl: Debian's PoCL works" >&2
    exit 0
fi
echo "ensure_opencl: trying Intel's OpenCL CPU runtime from PyPI" >&2
"$PY" -m pip install --quiet -e ".[intel]"
if works; then
    echo "ensure_opencl: Intel's OpenCL CPU runtime works" >&2
    exit 0
fi
"$PY" -m netcl_lite.doctor || true
echo "ensure_opencl: no OpenCL implementation could be installed that" \
     "compiles here (see above)" >&2
exit 1
