"""Sphinx configuration of the static course (``make course``).

tools/build_site.py assembles the sources in _build/site_src (the chapters'
notebooks with their stored outputs, the figures, a generated index and the
appendices) and runs Sphinx with this directory as the configuration
directory. Nothing here fetches anything when a page is viewed: the theme's
assets are local, MathJax 3 comes from the sphinx-mathjax-offline package and
the bibliography from references.bib (sphinxcontrib-bibtex).
"""

import html as html_lib
import json
import os
import pathlib
import re
import sys

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.template import FieldIsMissing, field, join, node, sentence
from pygments.lexer import inherit, words
from pygments.lexers.c_cpp import CLexer
from pygments.token import Keyword, Name

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

project = "Tokens & Attention"
author = "the Tokens & Attention authors"
copyright = "the Tokens & Attention authors, MIT license"

# the tree whose chapters, kernels and references.bib are built (--root)
COURSE_ROOT = pathlib.Path(os.environ.get("COURSE_ROOT", ROOT))

# The reference (tools/reference.py): autodoc imports the library of this
# tree, which touches no OpenCL device on import; viewcode gives each entry
# a link to its highlighted source.
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

extensions = ["myst_nb", "sphinx-mathjax-offline", "sphinxcontrib.bibtex",
              "sphinx.ext.autodoc", "sphinx.ext.viewcode", "reference"]
exclude_patterns = ["_notebooks/**", "_repo/**", "**/.ipynb_checkpoints"]
root_doc = "index"

# Render the stored (and by `make test` validated) outputs; never re-execute.
nb_execution_mode = "off"
nb_merge_streams = True
nb_output_stderr = "show"
# No widget manager from a CDN: the course's pages load nothing from outside.
nb_ipywidgets_js = {}
# Interactive figures (netcl_lite.viz) store a live widget view for JupyterLab
# and a self-contained HTML player beside it: the site shows the player.
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
]
autoclass_content = "both"  # the class's docstring, then __init__'s
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True  # GPT4_SPLIT_PATTERN, not its 100 characters
add_module_names = False  # softmax(x, causal=False), under its package's title
python_display_short_literal_types = True
# `name` in a docstring: a link to that entry where there is one, else code
default_role = "py:obj"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
myst_dmath_double_inline = True  # "text: $$x$$" in a paragraph, as Jupyter shows it
myst_update_mathjax = False  # the configuration below is complete
suppress_warnings = ["mystnb.unknown_mime_type"]

# MathJax 3.2.2 from the sphinx-mathjax-offline package, copied into
# _static/mathjax; a relative mathjax_path is relative to _static/.
mathjax_path = "mathjax/tex-chtml.js"
mathjax3_config = {
    "tex": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processEscapes": False,
    },
    "options": {
        "ignoreHtmlClass": "tex2jax_ignore|highlight",
        "processHtmlClass": "tex2jax_process|mathjax_process|math|output_area",
    },
}

html_theme = "furo"
html_title = "Tokens & Attention"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_js_files = ["course.js"]
html_favicon = "_static/favicon.svg"  # else browsers ask for /favicon.ico
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_theme_options = {
    "navigation_with_keys": True,
    "top_of_page_buttons": [],
}
pygments_style = "friendly"
pygments_dark_style = "monokai"


# --- the bibliography (sphinxcontrib-bibtex) ---------------------------------
# A chapter cites with a markdown link to references.bib#KEY, which JupyterLab
# shows as the authors and year it is written with; build_site.py points it at
# #ref-KEY, the entry's id on the bibliography page.
@node
def few_names(children, context, role):
    """The names of a role; of more than eight, the first six and "others"."""
    try:
        persons = context["entry"].persons[role]
    except KeyError:
        raise FieldIsMissing(role, context["entry"]) from None
    style = context["style"]
    shown = [style.format_name(p, style.abbreviate_names) for p in persons]
    shown = shown[:6] + ["others"] if len(shown) > 8 else shown
    return join(sep=", ", sep2=" and ", last_sep=", and ")[shown].format_data(
        context)


class CourseStyle(PlainStyle):
    """BibTeX's plain style (sorted by author, then year), with each title
    as references.bib writes it rather than in sentence case, and long
    author lists cut short."""

    def format_names(self, role, as_sentence=True):
        return sentence[few_names(role)] if as_sentence else few_names(role)

    def format_title(self, e, which_field, as_sentence=True):
        title = field(which_field)
        return sentence[title] if as_sentence else title


register_plugin("pybtex.style.formatting", "course", CourseStyle)
bibtex_bibfiles = [str(COURSE_ROOT / "references.bib")]
bibtex_default_style = "course"
bibtex_cite_id = "ref-{key}"
BIBLIOGRAPHY = "appendix/bibliography"
CITED = "appendix/cited.json"  # {key: [chapters citing it]}, by build_site.py


def bibliography_targets(app, doctree):
    """Each entry's id becomes a target that the chapters' links resolve to,
    and the page is rebuilt when the list of citing chapters changes."""
    if app.env.docname != BIBLIOGRAPHY:
        return
    app.env.note_dependency(CITED)
    std = app.env.get_domain("std")
    for key, bib in app.env.get_domain("cite").bibliographies.items():
        if key.docname == BIBLIOGRAPHY:
            for entry in bib.citation_nodes.values():
                std.anonlabels[entry["ids"][0]] = (BIBLIOGRAPHY, entry["ids"][0])


def finish_entries(app, doctree, docname):
    """In each entry: $...$ typeset as math, and "Cited in" with a link to
    each chapter citing it (on the bibliography page, and where the single
    page holds it)."""
    path = pathlib.Path(app.srcdir, CITED)
    cited = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for item in doctree.findall(nodes.list_item):
        ids = [i for i in item["ids"] if i.startswith("ref-")]
        if not ids or not isinstance(item.children[-1], nodes.paragraph):
            continue
        for text in list(item.findall(nodes.Text)):
            parts = re.split(r"\$(.+?)\$", str(text))
            if len(parts) > 1:
                text.parent.replace(text, [
                    nodes.math(p, p) if i % 2 else nodes.Text(p)
                    for i, p in enumerate(parts) if p])
        para = item.children[-1]
        pages = [p for p in cited.get(ids[0][len("ref-"):], []) if p[:2].isdigit()]
        if pages:
            para += nodes.Text(" Cited in ")
        for i, page in enumerate(pages):
            uri = app.builder.get_relative_uri(docname, f"chapters/{page}")
            para += nodes.reference("", page[:2], internal=True, refuri=uri)
            para += nodes.Text(", " if i < len(pages) - 1 else ".")


class OpenCLLexer(CLexer):
    """C plus OpenCL C's address spaces, vector types and work-item builtins."""

    name = "OpenCL C"
    aliases = ["opencl"]
    filenames = ["*.cl"]
    tokens = {
        "statements": [
            (words(("__kernel", "kernel", "__global", "global", "__local",
                    "local", "__constant", "constant", "__private", "private",
                    "__read_only", "__write_only", "restrict"),
                   suffix=r"\b"), Keyword.Reserved),
            (r"(?:u?char|u?short|u?int|u?long|half|float|double)"
             r"(?:2|3|4|8|16)\b", Keyword.Type),
            (words(("uchar", "ushort", "uint", "ulong", "half", "size_t"),
                   suffix=r"\b"), Keyword.Type),
            (words(("get_global_id", "get_local_id", "get_group_id",
                    "get_global_size", "get_local_size", "get_num_groups",
                    "barrier", "CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE",
                    "INFINITY", "NAN", "atomic_add", "atomic_cmpxchg",
                    "as_int", "as_uint", "as_float", "mad", "fma"),
                   suffix=r"\b"), Name.Builtin),
            inherit,
        ],
    }


# --- search that works from a file:// URL ------------------------------------
# Sphinx's search page fetches every result page to show a summary under its
# title; a browser refuses fetch() on file:// URLs, so a course opened from
# disk got titles only (and a console error per result). search-pages.js holds
# the text of every page's article, and search-offline.js answers those
# fetches from it (over HTTP too, which saves the requests).
SEARCH_PAGES = "_static/search-pages.js"
ARTICLE = re.compile(r'<article[^>]*role="main"[^>]*>.*?</article>', re.S)
DROP = [re.compile(p, re.S) for p in (
    r"<script\b.*?</script>", r"<style\b.*?</style>", r"<svg\b.*?</svg>",
    r"<img\b[^>]*>", r'<a class="headerlink"[^>]*>.*?</a>')]
# tags without an id carry nothing the summary needs; with an id they are
# anchors that a section's result points at
BARE_TAG = re.compile(r"</?(?:span|code|em|strong|a|div|p|pre|table|tr|td|th|"
                      r"thead|tbody|li|ul|ol|dl|dt|dd|blockquote|figure|"
                      r"figcaption|cite|sub|sup|button|label|input)"
                      r"(?:\s(?![^>]*\bid=)[^>]*)?>")


MATH_HTML = re.compile(
    r'(<(span|div) class="math[^"]*">)\s*\\[(\[](.*?)\\[)\]]\s*(</\2>)', re.S)


def _plain_math(m):
    sys.path.insert(0, str(ROOT / "tools"))
    from plain_text import tex_to_text

    text = tex_to_text(html_lib.unescape(m.group(3)))
    return m.group(1) + html_lib.escape(text, quote=False) + m.group(4)


def write_search_pages(app, exception):
    if exception or app.builder.name != "html":
        return
    out = pathlib.Path(app.outdir)
    pages = {}
    for docname in sorted(app.env.found_docs):
        path = out / f"{docname}.html"
        if not path.is_file():
            continue
        m = ARTICLE.search(path.read_text(encoding="utf-8"))
        if not m:
            continue
        html = m.group(0)
        for pattern in DROP:
            html = pattern.sub("", html)
        html = MATH_HTML.sub(_plain_math, html)  # summaries show no TeX
        html = BARE_TAG.sub("", html)
        pages[f"{docname}.html"] = re.sub(r"\n\s*\n+", "\n", html)
    text = ("// The text of every page, for the search page's summaries "
            "(site/conf.py).\nwindow.COURSE_SEARCH_PAGES = "
            + json.dumps(pages, ensure_ascii=True) + ";\n")
    (out / SEARCH_PAGES).write_text(text, encoding="utf-8")


def search_page_scripts(app, pagename, templatename, context, doctree):
    if pagename == "search":
        app.add_js_file("search-pages.js", priority=100)
        app.add_js_file("search-offline.js", priority=101)


def setup(app):
    app.add_lexer("opencl", OpenCLLexer)
    app.connect("doctree-read", bibliography_targets)
    app.connect("doctree-resolved", finish_entries)
    app.connect("html-page-context", search_page_scripts)
    app.connect("build-finished", write_search_pages)
    # Chapter titles may hold math, and the sidebar and the previous/next
    # links show them on every page: load MathJax on every page.
    app.set_html_assets_policy("always")
