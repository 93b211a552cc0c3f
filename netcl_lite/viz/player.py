"""Interactive figures that work in JupyterLab and in the static HTML course.

A chapter writes one function, ``draw(fig, **values)``, that draws into an
empty matplotlib figure for one setting of the controls (running whatever
kernels it needs), and hands it to :func:`player`. Displayed in a notebook,
the result is two things at once, and each front end shows the one it can:

- JupyterLab, with a kernel: ipywidgets controls. Every change calls
  ``draw`` again, so the kernels run again on the new values.
- The static course (no kernel, no network): one PNG frame per
  combination of control values, all rendered when the notebook executes,
  with a labelled ``<input type="range">`` (or ``<select>``) per control
  and a few lines of JavaScript that swap the frame. Nothing is loaded from
  anywhere: the frames are data URLs, the style and the script are inline
  (kept in ``netcl_lite/viz/static/player.css`` and ``player.js``).

Keep the grid small: the frames are stored in the notebook and in the site.
``nbytes`` is the size the static player adds.

>>> def draw(fig, slope):
...     ax = fig.add_subplot()
...     ax.plot([0, 1], [0, slope])
...     ax.set_ylim(-2, 2)
>>> p = player(draw, {"slope": [-1, 0, 1]}, name="demo", start={"slope": 1})
>>> len(p.frames), p.index_of(slope=1)
(3, 2)
>>> html = p.html()
>>> html.count('type="range"'), 'for="demo-0"' in html, "http" in html
(1, True, False)
>>> p.nbytes < 100_000
True
"""

import base64
import dataclasses
import functools
import html as html_lib
import importlib.resources
import io
import itertools
import json
import re

# matplotlib, Pillow and ipywidgets come with the course's extra; the
# core library needs none of them
_COURSE_EXTRA = "pip install 'netcl_lite[course]'"
try:
    import matplotlib.figure
    import PIL.Image
except ImportError as err:
    raise ImportError(f"netcl_lite.viz draws with matplotlib and Pillow "
                      f"({err.name} is missing): {_COURSE_EXTRA}") from err

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


@functools.cache
def _static(name):
    """A file of netcl_lite/viz/static/, inlined into every player: the
    style, and the script that finds its own player (the script's parent),
    reads the frames and on every change of a control shows the frame of
    the current combination."""
    path = importlib.resources.files("netcl_lite.viz") / "static" / name
    return path.read_text(encoding="utf-8").rstrip("\n")


@dataclasses.dataclass
class Control:
    """One control: the values ``draw`` receives, what the reader sees.

    kind is "range" (a slider over the values, in order) or "select"
    (a drop-down list). Plain lists become a Control: strings and
    booleans a select, numbers a range.
    """

    values: list
    label: str = ""
    labels: list = None
    kind: str = ""

    def __post_init__(self):
        self.values = list(self.values)
        if not self.values:
            raise ValueError(f"control {self.label!r} has no values")
        if self.labels is None:
            self.labels = [str(v) for v in self.values]
        self.labels = [str(x) for x in self.labels]
        if len(self.labels) != len(self.values):
            raise ValueError(f"control {self.label!r}: {len(self.labels)} labels "
                             f"for {len(self.values)} values")
        if not self.kind:
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool)
                          for v in self.values)
            self.kind = "range" if numeric else "select"
        if self.kind not in ("range", "select"):
            raise ValueError(f"control {self.label!r}: kind must be 'range' or "
                             f"'select', got {self.kind!r}")


class Player:
    """Frames of ``draw`` over every combination of ``controls``; see player()."""

    def __init__(self, draw, controls, name, title="", start=None,
                 figsize=(7.2, 3.2), dpi=96, live=None):
        if not _NAME.match(name):
            raise ValueError(f"name {name!r}: use lowercase letters, digits, '-'")
        self.draw, self.name, self.title = draw, name, title or name
        self.figsize, self.dpi, self.live = figsize, dpi, dict(live or {})
        self.controls = {}
        for key, c in controls.items():
            c = c if isinstance(c, Control) else Control(c, label=key)
            c.label = c.label or key
            self.controls[key] = c
        start = dict(start or {})
        unknown = set(start) - set(self.controls)
        if unknown:
            raise ValueError(f"start names unknown controls {sorted(unknown)}")
        self.start = {}
        for key, c in self.controls.items():
            value = start.get(key, c.values[0])
            if value not in c.values:
                raise ValueError(f"start {key}={value!r} is not one of {c.values}")
            self.start[key] = c.values.index(value)
        self.boxes = None           # the start frame's layout, once drawn
        self.frames, self.order = self._render_all()

    # --- frames -----------------------------------------------------------

    def layout(self, **values):
        """Where constrained layout puts the axes of draw(fig, **values):
        one box (x0, y0, width, height in figure fractions) per axes."""
        fig = matplotlib.figure.Figure(figsize=self.figsize, layout="constrained")
        self.draw(fig, **values)
        fig.draw_without_rendering()           # runs the layout engine
        return [tuple(ax.get_position().bounds) for ax in fig.axes]

    def render(self, **values):
        """PNG bytes of draw(fig, **values); same values, same bytes.

        Every frame puts its axes where constrained layout put those of the
        first frame shown (``self.boxes``), so a plot does not shift as a
        slider moves, and the layout is solved once, not once a frame. A
        frame with another number of axes is laid out on its own."""
        fig = matplotlib.figure.Figure(figsize=self.figsize)
        self.draw(fig, **values)
        if self.boxes is not None and len(fig.axes) == len(self.boxes):
            for ax, box in zip(fig.axes, self.boxes):
                ax.set_position(box)
        else:
            fig.set_layout_engine("constrained")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=self.dpi, facecolor="white",
                    metadata={"Software": None})
        # A palette of 64 colours keeps lines and text sharp at about a
        # third of the bytes of a full-colour PNG.
        image = PIL.Image.open(buf).convert("RGB")
        image = image.quantize(colors=64, method=PIL.Image.Quantize.MEDIANCUT)
        out = io.BytesIO()
        image.save(out, format="png", optimize=True)
        return out.getvalue()

    def _render_all(self):
        keys = list(self.controls)
        self.boxes = self.layout(**{k: self.controls[k].values[self.start[k]]
                                    for k in keys})
        frames, order, seen = [], [], {}
        for combo in itertools.product(*(self.controls[k].values for k in keys)):
            png = self.render(**dict(zip(keys, combo)))
            if png not in seen:  # identical pictures are stored once
                seen[png] = len(frames)
                frames.append(png)
            order.append(seen[png])
        return frames, order

    def index_of(self, **values):
        """Position of a combination of values in the frame grid."""
        index = 0
        for key, c in self.controls.items():
            index = index * len(c.values) + c.values.index(values[key])
        return self.order[index]

    def frame(self, **values):
        """The stored PNG bytes for these values."""
        return self.frames[self.index_of(**values)]

    # --- the static player ------------------------------------------------

    def html(self):
        """The self-contained HTML player (inline style, script, data URLs)."""
        esc = html_lib.escape
        urls = ["data:image/png;base64," + base64.b64encode(f).decode("ascii")
                for f in self.frames]
        start = {k: self.controls[k].values[i] for k, i in self.start.items()}
        first = self.index_of(**start)
        style = f"<style>\n{_static('player.css')}\n</style>"
        parts = [f'<div class="nl-player" id="{self.name}">', style,
                 f'<img class="nl-player-frame" src="{urls[first]}" '
                 f'alt="{esc(self._alt(self.start))}">',
                 f'<div class="nl-player-controls" role="group" '
                 f'aria-label="{esc(self.title)}: controls">']
        for i, (key, c) in enumerate(self.controls.items()):
            cid, at = f"{self.name}-{i}", self.start[key]
            parts.append('<div class="nl-player-control">'
                         f'<label for="{cid}">{esc(c.label)}</label>')
            if c.kind == "range":
                parts.append(
                    f'<input type="range" id="{cid}" data-axis="{i}" min="0" '
                    f'max="{len(c.values) - 1}" step="1" value="{at}" '
                    f'aria-valuetext="{esc(c.labels[at])}">'
                    f'<output for="{cid}">{esc(c.labels[at])}</output>')
            else:
                options = "".join(
                    f'<option value="{j}"{" selected" if j == at else ""}>'
                    f'{esc(text)}</option>' for j, text in enumerate(c.labels))
                parts.append(f'<select id="{cid}" data-axis="{i}">{options}'
                             '</select>')
            parts.append("</div>")
        data = {"title": self.title, "frames": urls, "order": self.order,
                "names": [c.label for c in self.controls.values()],
                "labels": [c.labels for c in self.controls.values()]}
        blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
        parts += ["</div>",
                  f'<script type="application/json" class="nl-player-data">'
                  f"{blob}</script>",
                  f"<script>{_static('player.js')}</script>", "</div>"]
        return "".join(parts)

    def _alt(self, at):
        settings = ", ".join(f"{c.label} = {c.labels[at[k]]}"
                             for k, c in self.controls.items())
        return f"{self.title}: {settings}"

    @property
    def nbytes(self):
        """Bytes the static player adds to the notebook (and to the page)."""
        return len(self.html().encode("utf-8"))

    # --- the live widget --------------------------------------------------

    def widget(self):
        """ipywidgets controls and an image; each change calls draw again."""
        try:
            import ipywidgets as W
        except ImportError as err:
            raise ImportError("live controls need ipywidgets: "
                              f"{_COURSE_EXTRA}") from err

        boxes = {}
        for key, c in self.controls.items():
            given = self.live.get(key)
            if isinstance(given, W.ValueWidget):
                boxes[key] = given
                continue
            values = list(given) if given is not None else c.values
            labels = c.labels if given is None else [str(v) for v in values]
            start = c.values[self.start[key]]
            options = list(zip(labels, values))
            # A slider for every kind: in JupyterLab its handle takes the
            # arrow keys, while the notebook's shortcuts swallow them on a
            # focused drop-down list.
            boxes[key] = W.SelectionSlider(
                options=options, description=c.label,
                value=start if start in values else values[0],
                style={"description_width": "initial"}, continuous_update=False)
        image = W.Image(format="png", layout=W.Layout(max_width="100%"))
        status = W.Label()

        def update(_=None):
            values = {k: b.value for k, b in boxes.items()}
            try:
                image.value = self.render(**values)
                status.value = ""
            except ValueError as err:  # e.g. text the model cannot take
                status.value = f"not drawn: {err}"

        for b in boxes.values():
            b.observe(update, names="value")
        update()
        return W.VBox([image, W.HBox(list(boxes.values())), status])

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/html": self.html(),
                  "text/plain": f"<interactive figure {self.name}: "
                                f"{len(self.frames)} frames>"}
        try:
            import ipywidgets  # noqa: F401
            from IPython import get_ipython
        except ImportError:
            return bundle
        if get_ipython() is None or not hasattr(get_ipython(), "kernel"):
            return bundle
        live = self.widget()._repr_mimebundle_()
        bundle["application/vnd.jupyter.widget-view+json"] = live[
            "application/vnd.jupyter.widget-view+json"]
        return bundle


def player(draw, controls, name, title="", start=None, figsize=(7.2, 3.2),
           dpi=96, live=None):
    """An interactive figure: frames of ``draw(fig, **values)`` for every
    combination of ``controls`` ({keyword: Control or list of values}).

    name is the HTML id (lowercase, digits, ``-``), unique on its page; title
    names the figure for screen readers; start picks the values shown first;
    live optionally gives JupyterLab other choices for a control (a list of
    values, or an ipywidgets ValueWidget such as a Text box), since there the
    kernel draws every setting on demand.
    """
    return Player(draw, controls, name, title=title, start=start,
                  figsize=figsize, dpi=dpi, live=live)
