"""llama-cpp-python for ``make bench``'s llama.cpp column, never for
``make install`` or ``make test``.

PyPI has only its source (an sdist that compiles llama.cpp: cmake, a C++
compiler, about 7 minutes on 2 cores). So the wheel is built once, from
the pinned sdist (version and sha256 below, checked by pip's
``--require-hashes``), into a cache, and installed from there afterwards:

1. ``llama_cpp`` imports already: nothing to do;
2. a wheel of the pinned version is in the cache
   (``$NETCL_WHEEL_CACHE``, else ``~/.cache/netcl_lite/wheels``): install it;
3. else build it there with ``pip wheel`` (llama.cpp tuned for this CPU,
   ``-DGGML_NATIVE=ON``, without its HTTP client), then install it.

Where it cannot be had (no network, no compiler), it says so in one line
and exits 0: the benchmark then skips the column with a line of its own.

    python tools/llama_cpp_wheel.py        # with the Python of the venv
"""

import os
import pathlib
import subprocess
import sys
import tempfile

VERSION = "0.3.36"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
CMAKE_ARGS = "-DGGML_NATIVE=ON -DLLAMA_CURL=OFF"


def cache_dir():
    given = os.environ.get("NETCL_WHEEL_CACHE")
    return pathlib.Path(given) if given else (
        pathlib.Path.home() / ".cache" / "netcl_lite" / "wheels")


def imports():
    return subprocess.run([sys.executable, "-c", "import llama_cpp"],
                          capture_output=True).returncode == 0


def pip(*args, env=None):
    return subprocess.run([sys.executable, "-m", "pip", *args], env=env,
                          capture_output=True, text=True)


def cached_wheel():
    found = sorted(cache_dir().glob(f"llama_cpp_python-{VERSION}-*.whl"))
    return found[-1] if found else None


def build():
    """pip wheel from the pinned sdist into the cache; the wheel or None."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        pins = pathlib.Path(tmp) / "requirements.txt"
        pins.write_text(f"llama-cpp-python=={VERSION} "
                        f"--hash=sha256:{SDIST_SHA256}\n")
        env = dict(os.environ, CMAKE_ARGS=CMAKE_ARGS)
        print(f"llama-cpp-python {VERSION}: building its wheel from the "
              f"sdist (minutes) into {cache_dir()}", flush=True)
        done = pip("wheel", "--quiet", "--no-deps", "--require-hashes",
                   "--no-binary", "llama-cpp-python", "-r", str(pins),
                   "-w", str(cache_dir()), env=env)
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        print(f"llama-cpp-python: could not build ({' '.join(tail)})")
        return None
    return cached_wheel()


def main():
    if imports():
        return 0
    wheel = cached_wheel() or build()
    if wheel is None:
        print("llama.cpp column: skipped (no wheel, and it did not build)")
        return 0
    done = pip("install", "--quiet", str(wheel))
    if done.returncode or not imports():
        print(f"llama.cpp column: skipped ({wheel.name} did not install)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
