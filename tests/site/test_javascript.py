"""The course's own JavaScript parses, and is written in one style.

The project has no node: esprima, from PyPI (ECMAScript 2017), parses each
file as a classic script, which is how every page loads it. The files are
the site's (site/_static/, its live figures in site/_static/live/) and the
library's player.js, which netcl_lite.viz inlines into every player. Each
one is written the same way:

- a comment first, saying what the script does;
- one function expression called at once, ``(function () { "use strict";
  ... })();``, so that a script adds to the page only what it sets on
  ``window``;
- ``const`` and ``let``, never ``var``; ``function`` expressions, not
  arrow functions.

Vendored npm code (tools/vendor_js.py) is not ours: only its wrapper is
checked.
"""

import pathlib

import pytest

esprima = pytest.importorskip("esprima")

REPO = pathlib.Path(__file__).resolve().parents[2]
FILES = sorted([*(REPO / "site").rglob("*.js"), *(REPO / "netcl_lite").rglob("*.js")])


def parse(text):
    return esprima.parseScript(text).toDict()


def walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def style_problems(text):
    """What departs from the course's style, as a list of strings."""
    tree = parse(text)
    problems = [] if text.startswith("//") else ["no comment first"]
    body = tree["body"]
    call = body[0]["expression"] if len(body) == 1 else {}
    if not (call.get("type") == "CallExpression" and not call["arguments"]
            and call["callee"]["type"] == "FunctionExpression"):
        problems.append("not one (function () { ... })(); around the script")
    else:
        first = call["callee"]["body"]["body"][:1]
        if not first or first[0].get("directive") != "use strict":
            problems.append('its function does not start with "use strict"')
    nodes = list(walk(tree))
    if any(n.get("type") == "VariableDeclaration" and n["kind"] == "var"
           for n in nodes):
        problems.append("var (const or let instead)")
    if any(n.get("type") == "ArrowFunctionExpression" for n in nodes):
        problems.append("an arrow function (function instead)")
    return problems


def test_the_course_has_its_scripts_in_two_places_only():
    homes = {p.parent.relative_to(REPO).as_posix() for p in FILES}
    assert homes == {"site/_static", "site/_static/live", "netcl_lite/viz/static"}
    assert [p.name for p in FILES if p.parent.name == "static"] == ["player.js"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_each_script_parses_and_keeps_the_style(path):
    assert style_problems(path.read_text(encoding="utf-8")) == []


def test_the_vendored_bundles_wrapper_keeps_the_style(tool):
    vendor_js = tool("vendor_js")
    bundle = vendor_js.cjs_bundle({"a": "module.exports = require('b');",
                                   "b": "module.exports = 2;"}, "a", "demo")
    assert style_problems(vendor_js.header([]) + bundle) == []


def test_the_check_finds_what_it_should():
    with pytest.raises(esprima.Error):
        parse("(function () {\n  const x = ;\n})();")
    assert style_problems("// ok\n(function () {\n  'use strict';\n})();") == []
    assert style_problems("(() => {\n  var x = 1;\n})();") == [
        "no comment first",
        "not one (function () { ... })(); around the script",
        "var (const or let instead)", "an arrow function (function instead)"]
    assert style_problems("// x\n(function () {\n  let y;\n})();") == [
        'its function does not start with "use strict"']
