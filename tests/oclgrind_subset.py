"""The Oclgrind subset: which tests run on the simulator, and what a report
looks like (used by tests/conftest.py and tests/test_oclgrind.py)."""

import pathlib
import re

# tests/oclgrind.txt lists the tests that also run on the Oclgrind simulator;
# they get the marker "oclgrind".
OCLGRIND_LIST = pathlib.Path(__file__).with_name("oclgrind.txt")
# Every Oclgrind report (bad access, data race, barrier divergence) has a
# "Kernel: <name>" line, indented by a tab.
OCLGRIND_REPORT = re.compile(r"^\tKernel:\s+\S", re.MULTILINE)


def oclgrind_subset():
    """The node ids (or prefixes) listed in tests/oclgrind.txt."""
    lines = OCLGRIND_LIST.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines
            if line.strip() and not line.startswith("#")]
