"""The library's reference, generated from its docstrings (Sphinx autodoc).

tools/build_site.py calls this module to write the site's reference pages,
and site/conf.py loads it as a Sphinx extension. Three jobs:

1. ``pages(root)``: one MyST page per package (``reference/core.md``, ...,
   ``reference/viz.md``) and an overview (``reference/index.md``). The
   public names are the packages' ``__all__``; nothing here lists them. A
   module without ``__all__`` (the core modules, autograd, inference) shows
   what it defines at its top level without a leading underscore. Each
   file that defines a public name gets a section: the file's docstring
   (its worked example), then an autodoc entry per name, with the
   signature. docs/api.md is the prose: the text above its first ``##``
   heading opens the overview, and each ``##`` section (headed by its
   package, ``netcl_lite.text``) opens that package's page.
2. ``link_names(markdown, targets)``: inline code in a chapter that names a
   documented object (``F.softmax``, ``BPETokenizer.train_from_iterator``,
   ``DecoderLM(queue, config)``) becomes a cross-reference to its entry, so
   that no page keeps a URL by hand. Sphinx checks each one.
3. ``setup(app)``: a docstring's "chapter 09" becomes a link to chapter 09;
   viewcode links every entry to its source.

Importing netcl_lite touches no OpenCL device (tests/test_api_docs.py
checks it), so autodoc runs without one.
"""

import ast
import hashlib
import importlib
import inspect
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]

# (page, the package it documents, the modules that hold its names when the
# package has no __all__), in the order the chapters meet them
PACKAGES = [
    ("core", "netcl_lite.core", ["device", "icd", "tensor", "pool", "program",
                                 "signature", "validate", "tensor_ops", "tune",
                                 "work", "roofline", "kernel_file",
                                 "quantized"]),
    ("autograd", "netcl_lite.autograd", []),
    ("functional", "netcl_lite.functional", []),
    ("nn", "netcl_lite.nn", []),
    ("inference", "netcl_lite.inference", ["decoder", "decode"]),
    ("optim", "netcl_lite.optim", []),
    ("text", "netcl_lite.text", []),
    ("viz", "netcl_lite.viz", []),
    ("interp", "netcl_lite.interp", []),
]
API_DOC = "docs/api.md"
PAGE_DIR = "reference"
# how the chapters spell a package in code: ``F.softmax``, ``ag.tensor``
PREFIXES = {"F": "netcl_lite.functional", "ag": "netcl_lite.autograd"}
SECTION = re.compile(r"^## .*?`(netcl_lite(?:\.\w+)*)`.*$", re.M)


# --- the public names -------------------------------------------------------

def top_level_names(module):
    """What a module without ``__all__`` offers: its top-level functions and
    classes, and instances of its own classes (``manager``), in file order,
    without a leading underscore."""
    tree = ast.parse(pathlib.Path(module.__file__).read_text(encoding="utf-8"))
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Name)
              and node.value.func.id in classes):
            names.append(node.targets[0].id)
    return [n for n in names if not n.startswith("_")]


def defining_module(package, name, obj):
    """The module whose file defines ``package.name``."""
    home = getattr(obj, "__module__", None)
    if (inspect.isclass(obj) or inspect.isfunction(obj)) and home:
        return importlib.import_module(home)
    # a constant: the submodule that assigns it
    for sub in sorted(pathlib.Path(package.__file__).parent.glob("*.py")):
        tree = ast.parse(sub.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return importlib.import_module(f"{package.__name__}.{sub.stem}")
    return package


def public_names(package_name, modules=()):
    """[(the module that defines them, [(where it is documented, name)])],
    the modules in the order their first name appears. A package's names
    are documented where it exports them (``netcl_lite.text.BPETokenizer``),
    those of a module without one where they live."""
    package = importlib.import_module(package_name)
    groups = {}
    if hasattr(package, "__all__"):
        for name in package.__all__:
            home = defining_module(package, name, getattr(package, name))
            groups.setdefault(home, []).append((package_name, name))
    else:
        subs = ([importlib.import_module(f"{package_name}.{m}") for m in modules]
                or [package])
        for sub in subs:
            groups[sub] = [(sub.__name__, n) for n in top_level_names(sub)]
    return list(groups.items())


def entry(where, name, obj):
    """The autodoc directive for one name, in reST (autodoc writes reST,
    so MyST pages hold it in an ``eval-rst`` block)."""
    full = f"{where}::{name}"
    if inspect.isclass(obj):
        return (f".. autoclass:: {full}\n   :members:\n   :undoc-members:\n"
                f"   :member-order: bysource\n")
    if callable(obj):
        return f".. autofunction:: {full}\n"
    if isinstance(obj, str):
        # the value as a block of its own: reST would read a regex's
        # brackets and underscores as markup
        value = "\n".join("      " + line for line in obj.splitlines())
        return (f".. autodata:: {full}\n   :no-value:\n\n   .. code-block:: text\n\n"
                f"{value}\n")
    if isinstance(obj, (int, float, tuple, bool)):
        return f".. autodata:: {full}\n"
    # an instance (the device manager): its class, not an address
    return (f".. autodata:: {full}\n   :no-value:\n"
            f"   :annotation: = {type(obj).__name__}()\n")


def rst_block(*directives):
    return "```{eval-rst}\n" + "\n".join(directives) + "```\n"


def members(cls):
    """The attributes of a class that autodoc documents (``:members:``)."""
    return [n for n in vars(cls) if not n.startswith("_")]


def targets():
    """{full name: page}: every documented object, classes' members too."""
    out = {}
    for page, package, modules in PACKAGES:
        for _, names in public_names(package, modules):
            for where, name in names:
                obj = getattr(importlib.import_module(where), name)
                out.setdefault(f"{where}.{name}", page)
                if inspect.isclass(obj):
                    for m in members(obj):
                        out.setdefault(f"{where}.{name}.{m}", page)
    return out


def is_method(owner, member):
    """Whether ``owner.member`` (full names) is a method of a class."""
    module, _, cls = owner.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        return False
    attr = vars(obj).get(member) if inspect.isclass(obj) else None
    return isinstance(attr, (classmethod, staticmethod)) or inspect.isfunction(attr)


def aliases(found):
    """{how the chapters write a name: its full name}. A package's exported
    names go by their bare names (``DecoderLM``, ``cosine_lr``,
    ``GPT4_SPLIT_PATTERN``), except the ops, which the chapters write ``F.add``; in a
    module without ``__all__`` only the classes do (``Tensor``); so does a
    method whose name only one class has."""
    out = {}
    for page, package, modules in PACKAGES:
        exported = hasattr(importlib.import_module(package), "__all__")
        for _, names in public_names(package, modules):
            for where, name in names:
                obj = getattr(importlib.import_module(where), name)
                if page == "functional" or not (exported or inspect.isclass(obj)):
                    continue
                out.setdefault(name, f"{where}.{name}")
    # a method with a name of its own (``encode_dialog``, not ``save``): the
    # one class that has it
    owners = {}
    for full in found:
        head, _, member = full.rpartition(".")
        if "_" in member.strip("_") and head in found and is_method(head, member):
            owners.setdefault(member, set()).add(full)
    for member, fulls in owners.items():
        if len(fulls) == 1 and member not in out:
            out[member] = fulls.pop()
    return out


# --- the pages --------------------------------------------------------------

def api_sections(root):
    """docs/api.md split at its ``##`` package headings: {"": the opening,
    package: (heading, body)}."""
    text = (root / API_DOC).read_text(encoding="utf-8")
    starts = list(SECTION.finditer(text))
    out = {"": text[:starts[0].start()] if starts else text}
    for m, nxt in zip(starts, starts[1:] + [None]):
        body = text[m.end():nxt.start() if nxt else len(text)]
        heading = m.group(0)[3:].strip()
        if m.group(1) in out:
            raise SystemExit(f"{API_DOC}: two sections for {m.group(1)}")
        out[m.group(1)] = (heading, body.strip("\n"))
    return out


def shift_headings(text):
    """A section's ``###`` headings become its page's ``##``."""
    return re.sub(r"^#(#+ )", r"\1", text, flags=re.M)


def source_path(module):
    return pathlib.Path(module.__file__).resolve().relative_to(ROOT).as_posix()


def package_page(package_name, modules, section):
    heading, body = section
    # docs/api.md's opening words, the package's docstring, then the rest
    # of its section (``### Where from_pretrained finds its files``)
    opening, sub, rest = shift_headings(body).partition("\n## ")
    out = [f"# {heading}", "", opening.strip("\n"), "",
           rst_block(f".. automodule:: {package_name}\n   :no-index:\n"), "",
           (sub + rest).strip("\n"), ""]
    for module, names in public_names(package_name, modules):
        out += [f"## `{source_path(module)}`", ""]
        blocks = [f".. automodule:: {module.__name__}\n   :no-index:\n"]
        if module.__name__ == package_name:
            blocks = []  # its docstring opens the page
        blocks += [entry(where, name, getattr(importlib.import_module(where), name))
                   for where, name in names]
        out += [rst_block(*blocks), ""]
    return "\n".join(out)


def index_page(opening, found):
    counts = {}
    for page in found.values():
        counts[page] = counts.get(page, 0) + 1
    out = [opening.rstrip(), "", "## The packages", ""]
    for page, package, _ in PACKAGES:
        out.append(f"- [`{package}`]({page}.md): {counts.get(page, 0)} entries")
    out += ["", "```{toctree}", ":hidden:", ":maxdepth: 1", ""]
    out += [page for page, _, _ in PACKAGES]
    out += ["```", ""]
    return "\n".join(out)


def pages(root):
    """{path under the site's sources: MyST text} for the reference."""
    sections = api_sections(root)
    wanted = {package for _, package, _ in PACKAGES}
    extra = sorted(set(sections) - wanted - {""})
    missing = sorted(wanted - set(sections))
    if extra or missing:
        raise SystemExit(f"{API_DOC}: no package page for {extra}, "
                         f"no section for {missing}")
    found = targets()
    out = {f"{PAGE_DIR}/index.md": index_page(sections[""], found)}
    for page, package, modules in PACKAGES:
        out[f"{PAGE_DIR}/{page}.md"] = package_page(package, modules,
                                                    sections[package])
    return out


CONCEPTS = ROOT / "site" / "concepts"  # the appendix's concept pages


def site_pages(root, linker):
    """The reference and the concept pages (appendix/text.md, ...), with
    their inline code linked to the entries and "chapter 09" to the
    chapter of ``root``."""
    docs = {int(p.name[:2]): f"chapters/{p.stem}"
            for p in sorted((root / "chapters").glob("[0-9][0-9]_*.ipynb"))}
    out = pages(ROOT)
    for path in sorted(CONCEPTS.glob("*.md")):
        out[f"appendix/{path.name}"] = path.read_text(encoding="utf-8")
    return {rel: linker(link_chapters(text, docs, role="{doc}")
                        if rel.startswith(PAGE_DIR) else text)
            for rel, text in out.items()}


def inputs():
    """The files the reference is made from, for the site's digest."""
    return [ROOT / API_DOC, pathlib.Path(__file__).resolve(),
            *sorted((ROOT / "netcl_lite").rglob("*.py"))]


# --- links from the chapters -------------------------------------------------

CODE = re.compile(r"(?<![`\\])`([^`\n]+)`(?!`)")
MD_LINK = re.compile(r"\[[^\]\n]*\]\([^)\n]*\)")
NAME = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(\(.*\))?$")
FENCE = re.compile(r"\s*(`{3,}|~{3,})")


def resolve(code, found, bare):
    """The full name a piece of inline code names, or None."""
    m = NAME.match(code.strip())
    if not m:
        return None
    first, _, rest = m.group(1).partition(".")
    if first in PREFIXES:
        full = PREFIXES[first] + ("." + rest if rest else "")
    elif first in bare:
        full = bare[first] + ("." + rest if rest else "")
    else:
        full = m.group(1)
    return full if full in found else None


def link_names(text, found, bare):
    """Markdown with each inline code span that names a documented object
    turned into a cross-reference to its entry; code blocks, headings, links
    and roles are left as they are."""
    out, fence = [], None

    def code(m):
        start = m.start()
        if start and m.string[start - 1] == "}":  # already a role
            return m.group(0)
        full = resolve(m.group(1), found, bare)
        if full is None or "<" in m.group(1) or ">" in m.group(1):
            return m.group(0)
        return f"{{py:obj}}`{m.group(1)} <{full}>`"

    def line_links(line):
        parts, last = [], 0
        for m in MD_LINK.finditer(line):  # no link inside a link's text
            parts.append(CODE.sub(code, line[last:m.start()]))
            parts.append(m.group(0))
            last = m.end()
        parts.append(CODE.sub(code, line[last:]))
        return "".join(parts)

    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if m and (fence is None or m.group(1)[0] == fence[0]):
            fence = None if fence else m.group(1)
            out.append(line)
            continue
        if fence or line.lstrip().startswith("#") or line.startswith("    "):
            out.append(line)
        else:
            out.append(line_links(line))
    return "".join(out)


class Linker:
    """link_names with the targets worked out once."""

    def __init__(self):
        self.found = targets()
        self.bare = aliases(self.found)

    def __call__(self, text):
        return link_names(text, self.found, self.bare)


# --- the Sphinx extension ----------------------------------------------------

CHAPTER = re.compile(r"\b([Cc]hapters?) (\d{1,2})((?:(?:,| and| or|, and) \d{1,2})*)\b")


def chapter_docs(srcdir):
    """{chapter number: docname} of the site's sources."""
    out = {}
    for path in sorted(pathlib.Path(srcdir, "chapters").glob("[0-9][0-9]_*.ipynb")):
        out[int(path.name[:2])] = f"chapters/{path.stem}"
    return out


def link_chapters(text, docs, role=":doc:"):
    """"chapter 09" -> a link to chapter 09 (``role`` ``:doc:`` in reST,
    ``{doc}`` in MyST); numbers with no chapter stay text."""

    def one(number, label):
        doc = docs.get(int(number))
        return f"{role}`{label} </{doc}>`" if doc else label

    def sub(m):
        word, first, more = m.groups()
        if word.lower() == "chapter" and not more:
            return one(first, f"{word} {first}")
        rest = re.sub(r"\d{1,2}", lambda n: one(n.group(0), n.group(0)), more)
        return f"{word} {one(first, first)}{rest}"

    return CHAPTER.sub(sub, text)


SUBSTITUTION = re.compile(r"\|(\w+)\|")           # <|eot_id|>, not a reST substitution
STARS = re.compile(r"(?<!\\)(\*+)")  # *args, **values, kernels/*.cl: plain stars


def prose(line, docs):
    """One line of a docstring's text as reST: "chapter 09" linked, stars
    and bars kept as they are; code between double backquotes untouched."""
    parts = line.split("``")
    for k in range(0, len(parts), 2):
        text = link_chapters(parts[k], docs)
        text = SUBSTITUTION.sub(r"\\|\1\\|", text)
        text = STARS.sub(lambda m: "\\*" * len(m.group(1)), text)
        # code touching a word ("``trace()``s") still ends where it ends
        if k and re.match(r"\w", text):
            text = "\\ " + text
        if k + 1 < len(parts) and re.search(r"\w$", text):
            text += "\\ "
        parts[k] = text
    return "``".join(parts)


def as_rest(lines, docs):
    """The library's docstrings are plain text with ``code`` and doctests.
    An indented block after a blank line (a table, a diagram, a code
    sample) is shown as it is written, as a literal block."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        blank_before = not out or not out[-1].strip()
        if (line.startswith(" ") and line.strip() and blank_before
                and not line.lstrip().startswith(">>>")):
            block = []
            while i < len(lines) and (not lines[i].strip()
                                      or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["::", ""] + block + [""]
            continue
        if line.lstrip().startswith(">>>"):  # a doctest: to the blank line
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            continue
        out.append(prose(line, docs))
        i += 1
    return out


def _docstring(app, what, name, obj, options, lines):
    # a constant's docstring is its type's ("str(object='') -> str"): none
    if what in ("data", "attribute") and lines and lines[0].strip() and (
            inspect.getdoc(type(obj)) or "").startswith(lines[0].strip()):
        lines[:] = []
        return
    lines[:] = as_rest(lines, chapter_docs(app.srcdir))


def _outdated(app, env, added, changed, removed):
    """The reference pages are read again when this file changes (Sphinx
    itself notices only a change of the library's files)."""
    digest = hashlib.sha256(pathlib.Path(__file__).read_bytes()).hexdigest()
    if getattr(env, "reference_digest", None) == digest:
        return []
    env.reference_digest = digest
    return [d for d in env.found_docs if d.startswith(PAGE_DIR + "/")]


def setup(app):
    app.connect("autodoc-process-docstring", _docstring)
    app.connect("env-get-outdated", _outdated)
    return {"parallel_read_safe": True}
