"""netcl_lite.viz.player: frames, the static HTML player, the live widget."""

import base64
import json
import re

import pytest

from netcl_lite.viz import Control, player

CALLS = []


def draw(fig, n, style):
    CALLS.append((n, style))
    ax = fig.add_subplot()
    ax.plot(range(n + 1), [i * i for i in range(n + 1)],
            "o-" if style == "dots" else "-")
    ax.set_xlim(0, 4)
    ax.set_ylim(0, 16)


def make(**kw):
    return player(draw, {"n": [1, 2, 3], "style": ["line", "dots"]},
                  name="test-fig", title="Squares", figsize=(3, 2), dpi=50, **kw)


def test_one_frame_per_combination_in_row_major_order():
    CALLS.clear()
    p = make()
    assert CALLS[0] == (1, "line")        # the start frame, laid out once
    assert CALLS[1:] == [(1, "line"), (1, "dots"), (2, "line"), (2, "dots"),
                         (3, "line"), (3, "dots")]
    assert len(p.order) == 6 and len(set(p.order)) == len(p.frames) == 6
    assert p.frame(n=2, style="dots") == p.frames[p.order[3]]
    for png in p.frames:
        assert png.startswith(b"\x89PNG")


def test_every_frame_keeps_the_start_frames_layout():
    """The axes do not move between frames, even where the content would
    move them (a long title in one frame only), and a frame with another
    number of axes gets a layout of its own."""
    import matplotlib.figure

    boxes = []

    def titled(fig, long, extra):
        ax = fig.add_subplot(1, 2 if extra else 1, 1)
        ax.set_title("a much longer title\nover two lines" if long else "t")
        if extra:
            fig.add_subplot(1, 2, 2)

    p = player(titled, {"long": [False, True], "extra": [False, True]},
               name="kept", figsize=(3, 2), dpi=40)
    real = matplotlib.figure.Figure.savefig

    def spy(fig, *args, **kw):
        fig.draw_without_rendering()
        boxes.append([tuple(ax.get_position().bounds) for ax in fig.axes])
        return real(fig, *args, **kw)

    matplotlib.figure.Figure.savefig = spy
    try:
        one = [p.render(long=v, extra=False) for v in (False, True)]
        two = p.render(long=False, extra=True)
    finally:
        matplotlib.figure.Figure.savefig = real
    assert boxes[0] == boxes[1] == p.boxes         # the same place, both titles
    assert len(boxes[2]) == 2                       # laid out on its own
    assert one[0] == p.frame(long=False, extra=False)
    assert one[1] == p.frame(long=True, extra=False) and two == p.frame(
        long=False, extra=True)


def test_frames_are_deterministic_and_identical_ones_are_stored_once():
    a, b = make(), make()
    assert a.frames == b.frames and a.html() == b.html()
    flat = player(lambda fig, k: fig.add_subplot().set_title("same"),
                  {"k": [0, 1, 2]}, name="flat", figsize=(2, 1), dpi=40)
    assert len(flat.frames) == 1 and flat.order == [0, 0, 0]


def test_html_is_self_contained_labelled_and_consistent():
    p = make(start={"n": 2, "style": "dots"})
    html = p.html()
    assert not re.search(r"(src|href)=[\"']?(https?:)?//", html)
    assert "http" not in html and "@import" not in html
    # one labelled control per axis: a range for numbers, a select for text
    assert '<label for="test-fig-0">n</label>' in html
    assert '<input type="range" id="test-fig-0" data-axis="0" min="0" max="2"' in html
    assert 'value="1"' in html and 'aria-valuetext="2"' in html
    assert '<label for="test-fig-1">style</label>' in html
    assert '<select id="test-fig-1" data-axis="1">' in html
    assert '<option value="1" selected>dots</option>' in html
    data = json.loads(re.search(
        r'<script type="application/json" class="nl-player-data">(.*?)</script>',
        html).group(1))
    assert data["labels"] == [["1", "2", "3"], ["line", "dots"]]
    assert data["names"] == ["n", "style"] and data["order"] == p.order
    decoded = [base64.b64decode(u.split(",", 1)[1]) for u in data["frames"]]
    assert decoded == p.frames
    first = re.search(r'<img class="nl-player-frame" src="([^"]+)"', html).group(1)
    assert base64.b64decode(first.split(",", 1)[1]) == p.frame(n=2, style="dots")
    assert p.nbytes == len(html.encode())


def test_bad_arguments_name_the_offending_value():
    with pytest.raises(ValueError, match="Bad Name"):
        player(draw, {"n": [1]}, name="Bad Name")
    with pytest.raises(ValueError, match="'style'"):
        player(draw, {"n": [1], "style": []}, name="x")
    with pytest.raises(ValueError, match="n=7"):
        make(start={"n": 7})
    with pytest.raises(ValueError, match="kind"):
        Control([1, 2], kind="knob")
    with pytest.raises(ValueError, match="2 labels for 3 values"):
        Control([1, 2, 3], labels=["a", "b"])


def test_live_widget_redraws_on_every_change():
    pytest.importorskip("ipywidgets")
    p = make()
    CALLS.clear()
    box = p.widget()
    image, controls, status = box.children
    n, style = controls.children
    assert CALLS == [(1, "line")] and image.value == p.frame(n=1, style="line")
    n.value = 3
    style.value = "dots"
    assert CALLS[-2:] == [(3, "line"), (3, "dots")]
    assert image.value == p.frame(n=3, style="dots") and status.value == ""


def test_live_widget_takes_wider_choices_than_the_frames():
    widgets = pytest.importorskip("ipywidgets")
    text = widgets.Text(value="4")
    p = player(lambda fig, s: fig.add_subplot().set_title(str(int(s))),
               {"s": ["1", "2"]}, name="live", figsize=(2, 1), dpi=40,
               live={"s": text})
    image, controls, status = p.widget().children
    assert controls.children == (text,)
    text.value = "not a number"          # draw raises ValueError: reported
    assert status.value.startswith("not drawn:")
    text.value = "3"
    assert status.value == "" and image.value == p.render(s="3")
