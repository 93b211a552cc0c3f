"""The package's layers import downwards only:

    core -> autograd -> functional -> inference -> nn -> interp
                                   -> optim
    formats -> text -> nn

(formats holds the model file formats that nn and text both read, GGUF,
and imports nothing else of the package; text reads only formats; nn uses
text, so that a real model comes with its tokenizer; viz stands alone;
``doctor.py``, the report of ``python -m netcl_lite.doctor``, reads core
and functional). Every import sits at the top of its file (no import
hidden in a function to dodge a cycle), and no file reads another layer's
private names. The modules in nn/ compose ops:
they launch no kernel, import nothing from core/program.py, and attend only
through ``F.scaled_dot_product_attention``, which picks the kernel.

Everything is read from the syntax tree (``ast``), not from the text:
relative imports are resolved to the module they name, and a call or an
attribute counts whatever it is spelled like (``launch(...)``,
``program.launch(...)``)."""

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
    # text: netcl_lite.nn.pretrained returns a model with its tokenizer
    "nn": {"core", "autograd", "functional", "inference", "nn", "text",
           "formats"},
    "optim": {"core", "autograd", "functional", "optim"},
    "text": {"text", "formats"},
    # a model file's format (GGUF), read by both nn and text: numpy and the
    # format's own package only
    "formats": {"formats"},
    "viz": {"viz"},  # the interactive figures: matplotlib and HTML only
    # analysis of a trained model: reads and replaces nn's named activations
    "interp": {"core", "autograd", "functional", "nn", "interp"},
    "doctor": {"core", "functional"},  # reports on the device; above all
}
# Private names a file reads from another layer, each with its reason. The
# doctor reports what core sees (the ICD files it reads, every device it
# considered), through core's own private helpers.
PRIVATE_READS = {"doctor.py": {"_vendor_lines", "_devices"}}
# What nn/ may import from core/program.py: ceil_div, arithmetic that happens
# to live there (nn/model.py rounds the hidden width with it). Nothing else.
NN_FROM_PROGRAM = {"ceil_div"}
# The attention ops and kernel launchers that nn/ must not call: the op
# F.scaled_dot_product_attention chooses among them (its docstring's table).
ATTENTION_CALLS = {"flash_attention", "flash_attention_simple", "fused_attention",
                   "fast_attention", "simple_attention", "attention_naive"}
FILES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


def module_of(path):
    """netcl_lite/nn/attention.py -> "netcl_lite.nn.attention"."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def layer(path):
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def layer_of(name):
    """The layer of a module name: "netcl_lite.core.program" -> "core";
    None outside the package (and for the package itself)."""
    parts = name.split(".")
    return parts[1] if parts[0] == "netcl_lite" and len(parts) > 1 else None


def is_module(name):
    """Whether netcl_lite.a.b names a module or package of this package."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def resolve(node, path):
    """The absolute module an ImportFrom reads from (relative ones too)."""
    if not node.level:
        return node.module
    here = module_of(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(tree, path):
    """(module, names bound here -> what they are, line, at top level?) for
    every import. A name is bound to "module" or "module.attr"; an
    ``import a.b.c`` binds a to "a" (the chain is read in ``attribute``)."""
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound = {a.asname: a.name} if a.asname else \
                    {a.name.split(".")[0]: a.name.split(".")[0]}
                yield a.name, bound, node.lineno, id(node) in top
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node, path)
            for a in node.names:
                full = f"{base}.{a.name}"
                # from netcl_lite.core import program: the module program;
                # from netcl_lite.core.program import launch: a name in it
                target = full if is_module(full) else base
                yield target, {a.asname or a.name: full}, node.lineno, \
                    id(node) in top


def bindings(tree, path):
    """{local name: the netcl_lite module or "module.attr" it stands for}."""
    found = {}
    for _, bound, _, _ in imports(tree, path):
        found.update({k: v for k, v in bound.items()
                      if v.split(".")[0] == "netcl_lite"})
    return found


def dotted(node):
    """The dotted name of a Name or Attribute chain, else None: F.matmul."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def absolute(name, bound):
    """Local dotted name -> the package name it reads, or None:
    "F.matmul" with F bound to netcl_lite.functional -> that + ".matmul"."""
    head, _, rest = name.partition(".")
    if head not in bound:
        return None
    return bound[head] + ("." + rest if rest else "")


def private(name):
    return name.startswith("_") and not name.startswith("__")


def parsed(path):
    return ast.parse(path.read_text(encoding="utf-8"))


def test_the_checks_see_relative_imports_and_their_targets():
    """The reader of imports itself, on a file with every form."""
    path = PACKAGE / "nn" / "example.py"
    tree = ast.parse("from . import attention\n"
                     "from ..core import program\n"
                     "from ..core.program import launch as go\n"
                     "from .. import functional as F\n"
                     "import netcl_lite.core.program\n")
    got = [(target, bound) for target, bound, _, _ in imports(tree, path)]
    assert got == [
        ("netcl_lite.nn.attention", {"attention": "netcl_lite.nn.attention"}),
        ("netcl_lite.core.program", {"program": "netcl_lite.core.program"}),
        ("netcl_lite.core.program", {"go": "netcl_lite.core.program.launch"}),
        ("netcl_lite.functional", {"F": "netcl_lite.functional"}),
        ("netcl_lite.core.program", {"netcl_lite": "netcl_lite"}),
    ]
    bound = bindings(tree, path)
    assert absolute("program.launch", bound) == "netcl_lite.core.program.launch"
    assert absolute("netcl_lite.core.program._lock", bound) == \
        "netcl_lite.core.program._lock"
    assert absolute("np.zeros", bound) is None


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_and_sit_at_the_top(path):
    here = layer(path)
    for name, _, line, at_top in imports(parsed(path), path):
        target = layer_of(name)
        if target is None:
            continue
        assert target in ALLOWED[here], (
            f"{path.name}:{line}: the {here} layer imports {name}, "
            f"which sits above it (allowed: {sorted(ALLOWED[here])})"
        )
        assert at_top, f"{path.name}:{line}: import {name} inside a function"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_names_of_other_layers(path):
    """Neither ``from x import _name`` nor ``module._name`` (nor
    ``Class._name``) across layers: the private part of a layer may change
    without notice."""
    here, tree = layer(path), parsed(path)
    bound = bindings(tree, path)
    reads = set()
    for node in ast.walk(tree):
        name = dotted(node) if isinstance(node, ast.Attribute) else None
        full = absolute(name, bound) if name else None
        if full:
            reads.add((full, node.lineno))
    for _, names, line, _ in imports(tree, path):
        reads.update((full, line) for full in names.values())
    for full, line in sorted(reads):
        other = layer_of(full) not in (None, here)
        bad = [p for p in full.split(".")[2:] if private(p)]
        allowed = PRIVATE_READS.get(path.name, set())
        assert not (other and set(bad) - allowed), (
            f"{path.name}:{line}: reads {full}, private to the "
            f"{layer_of(full)} layer")


NN = sorted((PACKAGE / "nn").rglob("*.py"))
NN_IDS = [str(p.relative_to(PACKAGE / "nn")) for p in NN]


@pytest.mark.parametrize("path", NN, ids=NN_IDS)
def test_modules_launch_no_kernels(path):
    """nn/ composes public ops: no ``launch`` call however it is spelled,
    and no import of core/program.py (where launch and the kernel cache
    live) beyond NN_FROM_PROGRAM."""
    tree = parsed(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else None
            assert name != "launch", \
                f"nn/{path.name}:{node.lineno} launches a kernel"
    for target, names, line, _ in imports(tree, path):
        if target != "netcl_lite.core.program":
            continue
        what = {full.rpartition(".")[2] for full in names.values()}
        assert all(full != target for full in names.values()) and \
            what <= NN_FROM_PROGRAM, (
                f"nn/{path.name}:{line} imports {sorted(what)} from "
                f"core/program.py (allowed: {sorted(NN_FROM_PROGRAM)})")


@pytest.mark.parametrize("path", NN, ids=NN_IDS)
def test_modules_attend_only_through_scaled_dot_product_attention(path):
    """No module calls an attention kernel or op other than
    ``F.scaled_dot_product_attention``, nor the decode launchers of the
    inference layer (its FusedDecoder calls those)."""
    tree = parsed(path)
    bound = bindings(tree, path)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        full = absolute(name, bound) if name else None
        called = (full or name or "").rpartition(".")[2]
        assert called not in ATTENTION_CALLS, (
            f"nn/{path.name}:{node.lineno} calls {name}: attend with "
            f"F.scaled_dot_product_attention, which picks the kernel")
    for target, _, line, _ in imports(tree, path):
        assert target != "netcl_lite.inference.decode", (
            f"nn/{path.name}:{line} imports the decode launchers")
