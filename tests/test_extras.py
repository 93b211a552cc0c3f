"""What the library imports is what pyproject.toml declares.

The core dependencies (numpy, pyopencl, regex) are all that ``import
netcl_lite`` and its layers need. What only the chapters use (figures,
live controls, progress bars) comes with the ``course`` extra, and a module
that needs it says so when it is missing.
"""

import ast
import importlib.metadata
import json
import pathlib
import re
import subprocess
import sys

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "netcl_lite"
COURSE_ONLY = ("matplotlib", "PIL", "ipywidgets", "tqdm", "IPython")


def _name(requirement):
    """The normalised distribution name of a requirement string."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return ({_name(r) for r in project["dependencies"]},
            {extra: {_name(r) for r in reqs} for extra, reqs in extras.items()})


def _imported_modules():
    """{top-level module: first file importing it} over netcl_lite/."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], path.relative_to(ROOT))
    return found


def test_every_import_of_the_library_is_declared():
    core, extras = _declared()
    anywhere = core.union(*extras.values())
    owners = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, where in _imported_modules().items():
        if module in sys.stdlib_module_names or module == "netcl_lite":
            continue
        dists = {_name(d) for d in owners.get(module, [module])}
        if not dists & anywhere:
            undeclared[module] = str(where)
    assert not undeclared, f"imported, not in pyproject.toml: {undeclared}"
    course_only = {_name(d) for m in COURSE_ONLY for d in owners.get(m, [m])}
    assert not course_only & core, course_only & core
    assert course_only <= extras["course"], course_only - extras["course"]


def test_dev_takes_the_other_extras_by_reference():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dev = project["optional-dependencies"]["dev"]
    (itself,) = [r for r in dev if _name(r) == "netcl-lite"]
    assert set(re.search(r"\[(.*)\]", itself).group(1).split(",")) >= {
        "course", "site", "models"}
    _, extras = _declared()
    repeated = {e: extras["dev"] & extras[e] for e in ("course", "site", "models")}
    assert not any(repeated.values()), repeated


BLOCKED = """
import importlib.abc, importlib.util, json, pkgutil, sys, traceback
blocked = set(sys.argv[1].split(","))

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Absent())
import netcl_lite
report = {}
for mod in pkgutil.walk_packages(netcl_lite.__path__, "netcl_lite."):
    try:
        importlib.import_module(mod.name)
        report[mod.name] = "ok"
    except Exception as err:
        report[mod.name] = f"{type(err).__name__}: {err}"
from netcl_lite.text import BPETokenizer
try:
    BPETokenizer().train_from_iterator(["ab ab ab"], 257, show_progress=True)
    report["show_progress"] = "ok"
except Exception as err:
    report["show_progress"] = f"{type(err).__name__}: {err}"
print(json.dumps(report))
"""


def test_the_library_imports_without_the_course_extra():
    """With matplotlib, Pillow, ipywidgets, tqdm and IPython made
    unimportable, every module imports, or raises an ImportError that
    names the extra; a progress bar asked for says the same."""
    out = subprocess.run([sys.executable, "-c", BLOCKED, ",".join(COURSE_ONLY)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    report = json.loads(out.stdout)
    hint = "pip install 'netcl_lite[course]'"
    failed = {m: r for m, r in report.items() if r != "ok"}
    assert all(r.startswith("ImportError") and hint in r
               for r in failed.values()), failed
    # only the figures need the extra; every layer of the library imports
    # (pkgutil walks no further into a package that failed)
    assert set(failed) == {"netcl_lite.viz", "show_progress"}, failed
    assert len(report) > 40, sorted(report)
