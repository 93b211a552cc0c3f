#!/usr/bin/env bash
# `make system-deps`: the Debian packages the course can use, installed
# when you ask for them.
#   tools/system/debian_packages.sh [PACKAGE...]   (default: all three)
#
# This is the project's only script that may ask for root, and only
# `make system-deps` runs it: `make install` never does (it changes nothing
# outside its Python environment). It lives in tools/system/, away from the
# install path (the Makefile and tools/*.sh), so a search of that path for
# escalation finds none. Packages already installed are left alone; when
# any is missing it runs apt-get as root, or through sudo when you are not
# root (sudo may ask for your password: running `make system-deps` is the
# request).
set -euo pipefail

ALL=(pocl-opencl-icd chromium oclgrind)

why() {
    case $1 in
        pocl-opencl-icd) echo "Debian's PoCL (3.1 with LLVM 15 on Debian 12), an" \
            "OpenCL driver for the CPU: it compiles on CPUs that pip's PoCL 3.0" \
            "cannot (AMD Zen 5)," \
            "and runs most kernels faster than Intel's runtime, the fallback" \
            "that make install puts in the environment." ;;
        chromium) echo "headless Chromium at /usr/bin/chromium: the site's tests" \
            "(tests/site) open every page of the built course in it, and" \
            "make pdf prints the course with it. Without it those tests skip." ;;
        oclgrind) echo "Oclgrind, a simulated OpenCL device that checks every" \
            "memory access and barrier: tests/test_oclgrind.py runs the kernel" \
            "tests on it. Without it that test skips." ;;
        *) echo "(not one of the course's packages: ${ALL[*]})" ;;
    esac
}

installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# apt_install PACKAGE...: install those of the Debian packages that are
# missing, as root with apt-get, else through sudo.
apt_install() {
    local missing=() p
    for p in "$@"; do
        installed "$p" || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "system-deps: all installed already: $*"
        return 0
    fi
    if ! command -v apt-get >/dev/null; then
        echo "system-deps: no apt-get here (not Debian or Ubuntu): install" \
             "${missing[*]} with this system's package manager" >&2
        return 1
    fi
    local as_root=()
    if [ "$(id -u)" != 0 ]; then
        if ! command -v sudo >/dev/null; then
            echo "system-deps: not root, and no sudo: as root, run" \
                 "apt-get install ${missing[*]}" >&2
            return 1
        fi
        as_root=(sudo)
    fi
    echo "system-deps: ${as_root[*]:+${as_root[*]} }apt-get install ${missing[*]}"
    ${as_root[@]+"${as_root[@]}"} apt-get update
    ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
}

[ $# -gt 0 ] || set -- "${ALL[@]}"
for p in "$@"; do
    if installed "$p"; then state="installed"; else state="to install"; fi
    echo "system-deps: $p ($state): $(why "$p")"
done
apt_install "$@"
