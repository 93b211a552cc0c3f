"""docs/api.md lists every public name: what a package exports in __all__
must be documented there."""

import importlib
import pathlib
import re

import pytest

DOC = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text(
    encoding="utf-8")
PACKAGES = ["netcl_lite.functional", "netcl_lite.nn", "netcl_lite.optim",
            "netcl_lite.text", "netcl_lite.viz"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_documented(package):
    names = importlib.import_module(package).__all__
    missing = [n for n in names if not re.search(rf"`[^`]*\b{n}\b[^`]*`", DOC)]
    assert not missing, f"{package}: {missing} are not in docs/api.md"
