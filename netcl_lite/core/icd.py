"""Make OpenCL implementations installed by pip visible to the ICD loader.

An OpenCL program does not link a driver. It links the *ICD loader*
(``libOpenCL.so``, bundled inside pyopencl's wheel), which reads a list of
drivers when the first platform is queried: one ``.icd`` text file per
driver, each naming a shared library. The loader looks in
``/etc/OpenCL/vendors``, or in ``$OCL_ICD_VENDORS`` (a folder, or one
library) when that is set; pyopencl's loader also adds the PoCL it ships.

Intel's OpenCL CPU runtime can be had from PyPI (``pip install
"netcl_lite[intel]"``: the packages ``intel-opencl-rt`` and
``intel-cmplr-lib-rt``). Its files land in ``<env>/lib``, where the loader
never looks, and the ``.icd`` file it installs names a placeholder path.
So, once, before the first platform query, ``prepare()``:

1. writes a vendors folder holding the system's ``.icd`` files plus one
   for ``<env>/lib/libintelocl.so``, and points ``OCL_ICD_VENDORS`` at it
   (only when the variable is not set already: a user's choice stands);
2. loads Intel's helper libraries (``libimf.so``, ``libtbb.so.12``, ...)
   into the process, which ``LD_LIBRARY_PATH`` would otherwise have to
   do, and that cannot be changed for a running process.

>>> from netcl_lite.core import icd
>>> found = icd.intel_runtime()       # None unless the [intel] extra is in
>>> found is None or found.name == "libintelocl.so"
True
"""

import ctypes
import os
import pathlib
import sys
import tempfile
import threading

SYSTEM_VENDORS = pathlib.Path("/etc/OpenCL/vendors")
INTEL_LIBRARY = "libintelocl.so"
# what libintelocl.so needs from <env>/lib, in an order that resolves
INTEL_HELPERS = ("libimf.so", "libintlc.so.5", "libirng.so", "libsvml.so",
                 "libtbb.so.12", "libtbbmalloc.so.2")

_done = None            # the report of the first prepare(), then reused
_lock = threading.Lock()


def intel_runtime(prefix=None):
    """``<env>/lib/libintelocl.so`` when Intel's runtime is pip-installed in
    the environment ``prefix`` (default: the running one), else None."""
    lib = pathlib.Path(prefix or sys.prefix) / "lib" / INTEL_LIBRARY
    return lib if lib.is_file() else None


def _vendor_lines(folder):
    """The libraries named by the ``.icd`` files of ``folder`` that exist
    (an absolute path that is not there, such as the placeholder in the
    file pip installs for Intel, is left out)."""
    lines = []
    for icd in sorted(pathlib.Path(folder).glob("*.icd")):
        try:
            line = icd.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if line and (not os.path.isabs(line) or os.path.exists(line)):
            lines.append((icd.name, line))
    return lines


def _vendors_folder():
    """A folder we may write: the cache, else a fresh temporary one."""
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    folder = pathlib.Path(base) / "netcl_lite" / "opencl-vendors"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".{os.getpid()}.tmp"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
        return folder
    except OSError:
        return pathlib.Path(tempfile.mkdtemp(prefix="netcl_lite-vendors-"))


def _write_vendors(intel_lib):
    """The system's ``.icd`` files, those of this environment's
    ``etc/OpenCL/vendors`` (conda keeps its drivers there) and one for
    Intel, written into one folder; returns the folder."""
    folder = _vendors_folder()
    wanted = {}
    for source in (SYSTEM_VENDORS,
                   pathlib.Path(sys.prefix) / "etc" / "OpenCL" / "vendors"):
        for name, line in _vendor_lines(source):
            wanted.setdefault(name, line)
    wanted["netcl-lite-intel.icd"] = str(intel_lib)
    for old in folder.glob("*.icd"):          # a driver since removed
        if old.name not in wanted:
            old.unlink(missing_ok=True)
    for name, line in wanted.items():
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(line + "\n", encoding="utf-8")
        os.replace(tmp, folder / name)        # whole, even with two writers
    return folder


def _preload(lib_dir):
    """Load Intel's helper libraries globally, so that the loader's later
    ``dlopen`` of libintelocl.so finds them already in the process."""
    loaded = []
    for name in INTEL_HELPERS:
        path = lib_dir / name
        if path.is_file():
            ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            loaded.append(name)
    return loaded


def prepare():
    """Make a pip-installed Intel runtime visible; idempotent, and cheap
    after the first call. Returns a list of lines saying what was done
    (``python -m netcl_lite.doctor`` prints them)."""
    global _done
    with _lock:
        if _done is not None:
            return _done
        report = []
        intel_lib = intel_runtime()
        if intel_lib is None:
            report.append("no pip-installed Intel OpenCL runtime in "
                          f"{sys.prefix}")
        else:
            try:
                loaded = _preload(intel_lib.parent)
                report.append(f"preloaded {', '.join(loaded)} from "
                              f"{intel_lib.parent}")
                if os.environ.get("OCL_ICD_VENDORS"):
                    report.append("OCL_ICD_VENDORS was set already "
                                  f"({os.environ['OCL_ICD_VENDORS']}): "
                                  "left as it is")
                else:
                    folder = _write_vendors(intel_lib)
                    os.environ["OCL_ICD_VENDORS"] = str(folder)
                    report.append(f"OCL_ICD_VENDORS={folder} (the system's "
                                  f"drivers plus {intel_lib})")
            except OSError as err:     # a broken install: say so, go on
                report.append(f"could not load Intel's runtime from "
                              f"{intel_lib.parent}: {err}")
        _done = report
        return report
