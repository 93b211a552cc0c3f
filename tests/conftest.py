import os
import pathlib
import re

import numpy as np
import pytest

from netcl_lite.core.device import manager

# tests/oclgrind.txt lists the tests that also run on the Oclgrind simulator
# (tests/test_oclgrind.py); they get the marker "oclgrind".
OCLGRIND_LIST = pathlib.Path(__file__).with_name("oclgrind.txt")
# Every Oclgrind report (bad access, data race, barrier divergence) has a
# "Kernel: <name>" line, indented by a tab.
OCLGRIND_REPORT = re.compile(r"^\tKernel:\s+\S", re.MULTILINE)


def oclgrind_subset():
    """The node ids (or prefixes) listed in tests/oclgrind.txt."""
    lines = OCLGRIND_LIST.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines
            if line.strip() and not line.startswith("#")]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "oclgrind: small tests that also run on Oclgrind "
                   "(listed in tests/oclgrind.txt)")


def pytest_collection_modifyitems(config, items):
    prefixes = tuple(oclgrind_subset())
    for item in items:
        if item.nodeid.startswith(prefixes):
            item.add_marker(pytest.mark.oclgrind)


@pytest.fixture(autouse=True)
def fail_on_oclgrind_reports(request):
    """With NETCL_FAIL_ON_OCLGRIND=1, a test whose kernels made Oclgrind
    report anything on stderr fails, showing the report."""
    if os.environ.get("NETCL_FAIL_ON_OCLGRIND") != "1":
        yield
        return
    capfd = request.getfixturevalue("capfd")
    yield
    err = capfd.readouterr().err
    if OCLGRIND_REPORT.search(err):
        pytest.fail(f"Oclgrind reported:\n{err[-6000:]}", pytrace=False)


@pytest.fixture(scope="session")
def queue():
    return manager.default("auto").queue


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
