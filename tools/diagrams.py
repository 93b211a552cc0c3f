"""Draw the course's schematic diagrams into figures/: ``python tools/diagrams.py``.

These are pictures of ideas, not of data, so no chapter computes them; this
script is their source. Each is drawn on an opaque white card with dark ink,
so it reads the same on the site's light and dark themes, and with text of
at least 11 points at a width that fits the site's content column.

    figures/04_qkv_projections.png   Q = X W_Q, K = X W_K, V = X W_V, shapes
    figures/05_split_merge_heads.png (S, D) -> (H, S, d_k) -> (S, D)
    figures/06_rope_rotation.png     q and k rotated, their angle kept
    figures/08_online_softmax.png    K/V blocks stream past a block of Q
    figures/09_decoder_block.png     the pre-norm decoder block of chapter 09
"""

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIGURES = ROOT / "figures"
INK = "#222222"
COLORS = {"X": "#d9d9d9", "Q": "#9ecae1", "K": "#fdae6b", "V": "#a1d99b",
          "W": "#f2f2f2", "state": "#dadaeb", "fast": "#fff2b3"}
plt.rcParams.update({"font.size": 11, "svg.hashsalt": "diagrams",
                     "text.color": INK, "axes.edgecolor": INK,
                     "figure.facecolor": "white", "savefig.facecolor": "white"})


def canvas(width, height):
    """A figure whose data units are inches, axes hidden."""
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def box(ax, x, y, w, h, color, label="", size=11, round_=False, **kw):
    """A filled rectangle with its lower-left corner at (x, y), label centred."""
    style = "round,pad=0.02,rounding_size=0.08" if round_ else "square,pad=0"
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=style, facecolor=color,
                                edgecolor=INK, linewidth=1.2, **kw))
    if label:
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center",
                fontsize=size)


def arrow(ax, start, end, text="", offset=(0, 0.12), **kw):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14,
                                 color=INK, linewidth=1.2, **kw))
    if text:
        mid = ((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1])
        ax.text(*mid, text, ha="center", va="bottom", fontsize=10)


def save(fig, name):
    FIGURES.mkdir(exist_ok=True)
    fig.savefig(FIGURES / name, dpi=110)
    plt.close(fig)
    return FIGURES / name


def qkv_projections():
    """Three matrix products with the shapes drawn to scale (S = 4, D = 6,
    d_k = 3): each row of X, one token, becomes one row of Q, K and V."""
    fig, ax = canvas(8.0, 5.6)
    u = 0.24                                         # inches per matrix entry
    S, D, dk = 4, 6, 3
    for row, name in enumerate("QKV"):
        y = 4.15 - row * 1.85
        box(ax, 0.3, y, D * u, S * u, COLORS["X"], "X")
        ax.text(0.3 + D * u / 2, y - 0.05, "(S, D)", ha="center", va="top",
                fontsize=10)
        ax.text(0.3 + D * u + 0.2, y + S * u / 2, "×", ha="center", va="center",
                fontsize=16)
        wx = 0.3 + D * u + 0.4
        box(ax, wx, y + S * u / 2 - D * u / 2, dk * u, D * u,
            COLORS["W"], f"$W_{name}$")
        ax.text(wx + dk * u / 2, y + S * u / 2 - D * u / 2 - 0.05,
                "(D, $d_k$)", ha="center", va="top", fontsize=10)
        ax.text(wx + dk * u + 0.25, y + S * u / 2, "=", ha="center", va="center",
                fontsize=16)
        ox = wx + dk * u + 0.5
        box(ax, ox, y, dk * u, S * u, COLORS[name], name)
        ax.text(ox + dk * u / 2, y - 0.05, "(S, $d_k$)", ha="center", va="top",
                fontsize=10)
        for i in range(1, S):                        # row lines: one per token
            ax.plot([ox, ox + dk * u], [y + i * u] * 2, color=INK, lw=0.5)
            ax.plot([0.3, 0.3 + D * u], [y + i * u] * 2, color=INK, lw=0.5)
    notes = ["row $i$ of X is token $i$'s vector",
             "one weight matrix, shared by all S rows",
             "row $i$ of Q, K, V: token $i$'s query,",
             "key and value (learned, separate $W$s)",
             "",
             "S tokens, width D; $d_k = D / H$ per head"]
    for i, line in enumerate(notes):
        ax.text(4.3, 4.9 - i * 0.42, line, fontsize=11, va="center")
    return save(fig, "04_qkv_projections.png")


def split_merge_heads():
    """(S, D) reshaped to (S, H, d_k), transposed to (H, S, d_k), and back."""
    fig, ax = canvas(9.0, 4.3)
    S, H, dk, u = 4, 3, 2, 0.26
    hc = [COLORS["Q"], COLORS["K"], COLORS["V"]]
    y0 = 1.3
    # (S, D): columns coloured by the head that owns them
    for h in range(H):
        box(ax, 0.3 + h * dk * u, y0, dk * u, S * u, hc[h])
    ax.text(0.3 + H * dk * u / 2, y0 + S * u + 0.1, "Q: (S, D)", ha="center")
    ax.text(0.3 + H * dk * u / 2, y0 - 0.12, f"D = H $d_k$", ha="center",
            va="top", fontsize=10)
    arrow(ax, (2.0, y0 + S * u / 2), (2.9, y0 + S * u / 2), "reshape\n(a view)")
    # (S, H, d_k): the same memory, read as H blocks per row
    for h in range(H):
        box(ax, 3.0 + h * (dk * u + 0.08), y0, dk * u, S * u, hc[h])
    ax.text(3.0 + H * (dk * u + 0.08) / 2, y0 + S * u + 0.1, "(S, H, $d_k$)",
            ha="center")
    arrow(ax, (4.9, y0 + S * u / 2), (5.8, y0 + S * u / 2), "transpose\n(permute)")
    # (H, S, d_k): one (S, d_k) matrix per head, stacked; each label sits to
    # the right of the top strip of its box, which the next box leaves free
    dx, dy = 0.18, 0.45
    for h in range(H):
        x, y = 6.0 + h * dx, y0 + 0.9 - h * dy
        box(ax, x, y, dk * u, S * u, hc[h])
        ax.text(x + dk * u + 0.08, y + S * u - dy / 2, f"head {h}", ha="left",
                va="center", fontsize=10)
    ax.text(6.0 + dk * u / 2, y0 + 0.9 + S * u + 0.12, "(H, S, $d_k$)",
            ha="center")
    ax.text(7.5, y0 + 0.2, "attention runs\nper head,\nH as a batch",
            fontsize=10, va="center")
    arrow(ax, (5.8, 0.55), (0.6, 0.55), "merge: transpose back to (S, H, $d_k$), "
          "reshape to (S, D), then $W_O$", offset=(0, -0.42),
          connectionstyle="arc3,rad=0")
    ax.text(4.5, 3.95, "Splitting and merging heads (S = 4, H = 3, $d_k$ = 2)",
            ha="center", fontsize=12)
    return save(fig, "05_split_merge_heads.png")


def rope_rotation():
    """Two placements of the same pair (q at m, k at n = m + 2): both vectors
    turn, the angle between them stays (n - m) theta."""
    import numpy as np
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 4.0))
    theta = 0.45
    q0, k0 = np.array([1.0, 0.25]), np.array([0.8, 0.55])
    for ax, m in zip(axes, (1, 4)):
        n = m + 2
        ax.set_xlim(-1.35, 1.35)
        ax.set_ylim(-1.35, 1.35)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.add_patch(plt.Circle((0, 0), 1.1, fill=False, color="#999999", lw=0.8,
                                ls="--"))
        for vec, pos, color, name in ((q0, m, "#3182bd", "q"),
                                      (k0, n, "#e6550d", "k")):
            c, s = np.cos(pos * theta), np.sin(pos * theta)
            rot = np.array([[c, -s], [s, c]]) @ vec
            ax.annotate("", xy=vec, xytext=(0, 0),
                        arrowprops=dict(arrowstyle="-|>", color=color, lw=1,
                                        ls=":", alpha=0.6))
            ax.annotate("", xy=rot, xytext=(0, 0),
                        arrowprops=dict(arrowstyle="-|>", color=color, lw=2))
            pos_name = "m" if name == "q" else "n"
            ax.text(*(rot * 1.18), f"$R({pos_name}\\theta){name}$", color=color,
                    ha="center", va="center", fontsize=12)
        ax.set_title(f"m = {m}, n = {n}:  both turn, the gap stays "
                     f"$(n-m)\\theta$", fontsize=11)
    fig.text(0.5, 0.03, "dotted: q and k before rotation (the same in both panels);"
             " solid: rotated by their positions", ha="center", fontsize=10)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.9, bottom=0.1, wspace=0.05)
    return save(fig, "06_rope_rotation.png")


def online_softmax():
    """One work-group keeps a block of Q rows and their running state in fast
    memory while K and V blocks stream through from device memory."""
    fig, ax = canvas(9.0, 4.6)
    # device memory (large, slow)
    box(ax, 0.2, 0.3, 3.4, 3.7, "#f7f7f7", round_=True)
    ax.text(1.9, 3.8, "device memory (large, slow)", ha="center", fontsize=11)
    for b in range(4):
        box(ax, 0.45 + b * 0.78, 2.4, 0.62, 1.0, COLORS["K"], f"$K_{b + 1}$")
        box(ax, 0.45 + b * 0.78, 1.2, 0.62, 1.0, COLORS["V"], f"$V_{b + 1}$")
    box(ax, 0.45, 0.45, 3.0, 0.55, COLORS["Q"], "Q, and O written once at the end")
    # on-chip memory (small, fast)
    box(ax, 4.9, 0.3, 3.9, 3.7, COLORS["fast"], round_=True)
    ax.text(6.85, 3.8, "on-chip memory of one work-group\n(small, fast)",
            ha="center", va="top", fontsize=11)
    box(ax, 5.1, 2.3, 1.2, 0.8, COLORS["Q"], "$Q_i$ block\n(stays)", size=10)
    box(ax, 6.55, 2.3, 0.95, 0.8, COLORS["K"], "$K_t$", size=11)
    box(ax, 7.65, 2.3, 0.95, 0.8, COLORS["V"], "$V_t$", size=11)
    box(ax, 5.1, 0.5, 3.5, 1.45, COLORS["state"],
        "running state per query row:\nmax $m$, denominator $r$,\n"
        "unnormalised output $\\mathbf{a}$", size=10)
    arrow(ax, (3.45, 2.9), (6.5, 2.85), connectionstyle="arc3,rad=-0.25")
    ax.text(4.25, 3.5, "K, V block t\nstreams in,\nt = 1, 2, ...", ha="center",
            fontsize=10)
    arrow(ax, (3.6, 0.72), (5.05, 2.5), "read once", offset=(-0.3, -0.05))
    ax.text(4.25, 0.12, "never stored: the S × S scores; each block's are "
            "used and dropped", ha="center", fontsize=10)
    return save(fig, "08_online_softmax.png")


def decoder_block():
    """The pre-norm block of chapter 09, bottom to top, with its residuals."""
    fig, ax = canvas(6.2, 6.9)
    x, w = 1.4, 2.6
    ax.text(x + w / 2, 0.15, "x: (B, S, D)", ha="center", fontsize=11)
    attention = "attention: RoPE on q, k;\ncausal, GQA (H query, $H_{KV}$ kv heads)"
    swiglu = "SwiGLU: $(\\mathrm{silu}(x W_{gate}) \\odot x W_{up}) W_{down}$"
    steps = [(0.9, "RMSNorm", "#eeeeee"), (1.75, attention, COLORS["Q"]),
             (3.25, "RMSNorm", "#eeeeee"), (4.1, swiglu, COLORS["V"])]
    for y, label, color in steps:
        box(ax, x, y, w, 0.6 if "RMS" in label else 0.8, color, label, size=10,
            round_=True)
    spine = x + w / 2
    arrow(ax, (spine, 0.42), (spine, 0.88))
    arrow(ax, (spine, 1.52), (spine, 1.73))
    for y_plus, top in ((2.85, 3.23), (5.2, 5.95)):
        ax.add_patch(plt.Circle((spine, y_plus), 0.17, facecolor="white",
                                edgecolor=INK, lw=1.2))
        ax.text(spine, y_plus, "+", ha="center", va="center", fontsize=13)
        arrow(ax, (spine, y_plus + 0.17), (spine, top))
    arrow(ax, (spine, 2.57), (spine, 2.68))
    arrow(ax, (spine, 3.87), (spine, 4.08))
    arrow(ax, (spine, 4.92), (spine, 5.03))
    # the residual paths: around each sub-layer
    for y0, y1, xr in ((0.55, 2.85, x + w + 0.45), (3.12, 5.2, x + w + 0.85)):
        ax.plot([spine, xr, xr], [y0, y0, y1], color=INK, lw=1.2)
        arrow(ax, (xr, y1), (spine + 0.18, y1))
        ax.text(xr + 0.1, (y0 + y1) / 2, "residual", rotation=90, va="center",
                fontsize=10)
    ax.text(spine, 6.15, "to the next block (same shape)", ha="center", fontsize=11)
    ax.text(spine, 6.6, "One decoder block (chapter 09)", ha="center", fontsize=12)
    return save(fig, "09_decoder_block.png")


def main():
    for draw in (qkv_projections, split_merge_heads, rope_rotation, online_softmax,
                 decoder_block):
        print(draw().relative_to(ROOT))


if __name__ == "__main__":
    main()
