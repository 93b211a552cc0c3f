"""Plain text for the places that cannot typeset TeX or show a figure:
page titles, the sidebar, search summaries, and the alt text of plots.

Used by tools/build_site.py (titles, alt text) and site/conf.py (the search
page's summaries). pylatexenc turns TeX into Unicode text; the course adds
sub- and superscript characters, and fractions and roots that keep their
grouping.
"""

import ast
import re

from pylatexenc import latex2text, latexwalker, macrospec

SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx",
               "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
SUP = dict(zip("0123456789+-=()inT⊤", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀᵀ"))
OPERATORS = re.compile(r"\s*([·×≤≥≈≠→←∈±∼⊙⊗=∝])\s*")
MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$")


def _args(node, l2tobj):
    args = node.nodeargd.argnlist if node.nodeargd else []
    return [l2tobj.nodelist_to_text([a]).strip() for a in args if a] or [""]


def _grouped(text):
    return f"({text})" if re.search(r"[\s+\-/,=]", text) else text


def _script(node, l2tobj):
    text, mark = _args(node, l2tobj)[-1], node.specials_chars
    table = SUB if mark == "_" else SUP
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    return mark + (text if len(text) <= 1 else f"({text})")


def _plain(node, l2tobj):  # \mathbf{W}: W, not a bold math character
    return _args(node, l2tobj)[-1]


def _frac(node, l2tobj):
    return "/".join(map(_grouped, _args(node, l2tobj)))


def _sqrt(node, l2tobj):
    return "√" + _grouped(_args(node, l2tobj)[-1])


# _ and ^ take one argument, as \frac takes two
_PARSE = latexwalker.get_default_latex_context_db()
_PARSE.add_context_category("course", prepend=True, specials=[
    macrospec.SpecialsSpec(c, args_parser=macrospec.MacroStandardArgsParser("{"))
    for c in "_^"], macros=[
    *(macrospec.MacroSpec(name, "{{") for name in ("tfrac", "dfrac")),
    macrospec.MacroSpec("operatorname", "{")])
_TEXT = latex2text.get_default_latex_context_db()
_TEXT.add_context_category("course", prepend=True, macros=[
    *(latex2text.MacroTextSpec(name, _plain) for name in (
        "mathbf", "mathbb", "mathit", "mathsf", "mathrm", "boldsymbol",
        "operatorname", "text")),
    *(latex2text.MacroTextSpec(name, "") for name in (  # sizes: nothing
        "big", "Big", "bigl", "bigr", "Bigl", "Bigr", "left", "right",
        "displaystyle")),
    *(latex2text.MacroTextSpec(name, _frac) for name in ("frac", "tfrac", "dfrac")),
    latex2text.MacroTextSpec("sqrt", _sqrt),
    latex2text.MacroTextSpec("|", "‖"),
], specials=[latex2text.SpecialsTextSpec(c, _script) for c in "_^"])
# log, exp, max, softmax, ...: an unknown command reads as its name
_TEXT.set_unknown_macro_spec(latex2text.MacroTextSpec("", lambda n: n.macroname))
_TO_TEXT = latex2text.LatexNodes2Text(
    latex_context=_TEXT, math_mode="text", strict_latex_spaces={
        "between-macro-and-chars": False, "between-latex-constructs": True,
        "after-comment": False, "in-equations": None})


def tex_to_text(tex):
    """Inline TeX as plain Unicode text, for places that cannot typeset it
    (page titles, the sidebar, search results, alt text).

    >>> tex_to_text(r"1/\\sqrt{d_k}")
    '1/√dₖ'
    """
    nodes = latexwalker.LatexWalker(tex, latex_context=_PARSE,
                                    tolerant_parsing=True).get_latex_nodes()[0]
    text = OPERATORS.sub(r" \1 ", _TO_TEXT.nodelist_to_text(nodes))
    return re.sub(r"\s+", " ", text).strip()


def plain_heading(text):
    """A markdown heading's text with every $...$ replaced by tex_to_text."""
    return MATH_SPAN.sub(lambda m: tex_to_text(m.group(1) or m.group(2)), text)


def _literal(node):
    """The text of a string literal; an f-string's fields become '…'."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…"
                       for v in node.values)
    return None


def figure_alt(source):
    """Alt text for the plot a code cell draws, read from its matplotlib
    calls: titles, axis labels and legend labels.

    >>> figure_alt('ax.set_title("Loss")\\nax.set_xlabel("step")')
    'Plot: Loss. x axis: step.'
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    found = {"title": [], "x": [], "y": [], "label": []}
    kinds = {"set_title": "title", "suptitle": "title", "title": "title",
             "set_xlabel": "x", "xlabel": "x", "set_ylabel": "y",
             "ylabel": "y"}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if name in kinds and node.args:
            text = _literal(node.args[0])
            if text:
                found[kinds[name]].append(text)
        for kw in node.keywords:
            if kw.arg == "label":
                text = _literal(kw.value)
                if text:
                    found["label"].append(text)

    def join(items):
        seen = []
        for item in items:
            item = plain_heading(item.replace("\n", " ")).strip()
            if item and item not in seen:
                seen.append(item)
        return "; ".join(seen)

    parts = [f"{what}: {join(found[key])}." for key, what in (
        ("title", "Plot"), ("x", "x axis"), ("y", "y axis"),
        ("label", "Series")) if found[key]]
    alt = " ".join(parts)
    return alt if len(alt) <= 400 else alt[:399].rstrip() + "…"


def first_comment(source):
    for line in source.splitlines():
        m = re.match(r"\s*#\s*(.{8,})", line)
        if m:
            return m.group(1).strip()
    return ""
