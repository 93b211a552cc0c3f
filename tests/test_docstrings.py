"""Every docstring example in netcl_lite runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import netcl_lite

MODULES = ["netcl_lite"] + sorted(
    name for _, name, _ in pkgutil.walk_packages(netcl_lite.__path__, "netcl_lite.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} example(s) failed"
