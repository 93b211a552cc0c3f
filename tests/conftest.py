import os

import numpy as np
import pytest

from netcl_lite.core.device import manager
from oclgrind_subset import OCLGRIND_REPORT, oclgrind_subset


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "oclgrind: small tests that also run on Oclgrind "
                   "(listed in tests/oclgrind.txt)")


def pytest_report_header(config):
    """Which OpenCL implementation this run tests (NETCL_PLATFORM picks)."""
    try:
        dev = manager.default("auto")
    except RuntimeError as err:
        return f"netcl_lite device: none ({str(err).splitlines()[0]})"
    return f"netcl_lite device: {dev.name} on {dev.platform} [{dev.kind}]"


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


@pytest.fixture(scope="session")
def smollm2_path():
    """The SmolLM2-135M-Instruct GGUF file (netcl_lite/nn/hub/):
    from the cache, else fetched. Without it and without a network the
    test skips, saying why, unless COURSE_REQUIRE_SMOLLM2=1 (.ci/run sets
    it): then it fails."""
    from netcl_lite.nn.hub import fetch
    try:
        return fetch("SmolLM2-135M-Instruct")
    except ValueError as err:
        if os.environ.get("COURSE_REQUIRE_SMOLLM2") == "1":
            pytest.fail(f"COURSE_REQUIRE_SMOLLM2=1 but {err}", pytrace=False)
        pytest.skip(f"SmolLM2-135M-Instruct not available: "
                    f"{str(err).splitlines()[0]}")
