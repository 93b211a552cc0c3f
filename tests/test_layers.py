"""The package's layers import downwards only:

    core -> autograd -> functional -> inference -> nn; optim above functional
    (text and viz stand alone)

(``doctor.py``, the report of ``python -m netcl_lite.doctor``, reads core
and functional);

and every import sits at the top of its file (no import hidden in a
function to dodge a cycle)."""

import ast
import pathlib

import pytest

import netcl_lite

PACKAGE = pathlib.Path(netcl_lite.__file__).parent
# each layer and the layers it may import from
ALLOWED = {
    "core": {"core"},
    "autograd": {"core", "autograd"},
    "functional": {"core", "autograd", "functional"},
    # forward-only paths on buffers they own (the fused decoder), no tape
    "inference": {"core", "autograd", "functional", "inference"},
    "nn": {"core", "autograd", "functional", "inference", "nn"},
    "optim": {"core", "autograd", "functional", "optim"},
    "text": {"text"},
    "viz": {"viz"},  # the interactive figures: matplotlib and HTML only
    "doctor": {"core", "functional"},  # reports on the device; above all
}
FILES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


def layer(path):
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported(tree):
    """(module name, line, at top level?) for every netcl_lite import."""
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("netcl_lite."):
                yield name, node.lineno, id(node) in top


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_and_sit_at_the_top(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = layer(path)
    for name, line, at_top in imported(tree):
        target = name.split(".")[1]
        assert target in ALLOWED[here], (
            f"{path.name}:{line}: the {here} layer imports {name}, "
            f"which sits above it (allowed: {sorted(ALLOWED[here])})"
        )
        assert at_top, f"{path.name}:{line}: import {name} inside a function"



def test_modules_launch_no_kernels_and_read_no_private_state():
    """nn/ composes public ops: no launch of its own, no ag._active."""
    for path in sorted((PACKAGE / "nn").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "launch(" not in source, f"nn/{path.name} launches a kernel"
        assert "._active" not in source, f"nn/{path.name} reads a private tape"
