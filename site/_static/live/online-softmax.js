// Chapter 08's online softmax over the reader's own scores, `tile` keys at
// a time, as online_attention_row in the chapter: after each tile the
// running max m, the running sum r = sum exp(s_j - m) over the keys seen,
// and the partial output a / r, where a = sum exp(s_j - m) v_j. Key j's
// value v_j is the reader's `values` (blank: v_j = j, so the output is
// where the row looks on average).
// Output JSON: m, r, out (one entry per tile), alpha (the factor
// exp(m_old - m_new) each tile rescales by), softmax, exact.
(function () {
  "use strict";
  const el = Live.el;
  const svgEl = Live.svg;
  const START = "1.5, -0.3, 0.2, 2.8, 0.9, -1.2, 3.4, 0.1, 0.6, 2.2, -0.5, 1.0";

  const HUES = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"];

  // The scores as bars, coloured by tile, and the running max after each
  // tile as a red step
  function chart(r) {
    const W = 460,
      H = 150,
      pad = 18,
      n = r.scores.length;
    const lo = Math.min(0, Math.min.apply(null, r.scores));
    const hi = Math.max(0, Math.max.apply(null, r.scores));
    const y = function (v) {
      return pad + ((H - 2 * pad) * (hi - v)) / (hi - lo || 1);
    };
    const w = (W - 2 * pad) / n;
    const svg = svgEl("svg", {
      viewBox: "0 0 " + W + " " + H,
      class: "live-svg live-wide",
      role: "img",
      "aria-label": "scores by tile and the running max",
    });
    svg.appendChild(
      svgEl("line", { x1: pad, x2: W - pad, y1: y(0), y2: y(0), stroke: "#999" }),
    );
    r.scores.forEach(function (s, j) {
      const tile = Math.floor(j / r.tile);
      svg.appendChild(
        svgEl("rect", {
          x: (pad + j * w + 1).toFixed(1),
          y: Math.min(y(s), y(0)).toFixed(1),
          width: Math.max(1, w - 2).toFixed(1),
          height: Math.abs(y(s) - y(0)).toFixed(1),
          fill: HUES[tile % HUES.length],
        }),
      );
    });
    r.m.forEach(function (m, t) {
      const x0 = pad + r.keys[t][0] * w,
        x1 = pad + (r.keys[t][1] + 1) * w;
      svg.appendChild(
        svgEl("line", {
          x1: x0.toFixed(1),
          x2: x1.toFixed(1),
          y1: y(m).toFixed(1),
          y2: y(m).toFixed(1),
          stroke: "#d62728",
          "stroke-width": 2,
        }),
      );
    });
    svg.appendChild(
      svgEl(
        "text",
        { x: W - pad, y: 12, "text-anchor": "end", "font-size": 11, fill: "#d62728" },
        "running max m after each tile",
      ),
    );
    return svg;
  }

  Live.register("online-softmax", {
    build: function (box, root) {
      box.append(
        Live.field(
          "scores",
          el("input", {
            name: "scores",
            type: "text",
            value: START,
            size: "60",
            spellcheck: "false",
          }),
          "comma-separated",
        ),
        Live.field(
          "tile",
          el("input", {
            name: "tile",
            type: "number",
            min: "1",
            step: "1",
            value: "4",
          }),
          "keys per tile",
        ),
        Live.field(
          "values",
          el("input", {
            name: "values",
            type: "text",
            value: "",
            size: "40",
            placeholder: "blank: v_j = j",
          }),
          "one per score, or blank",
        ),
      );
    },
    compute: function (values) {
      const s = Live.list(values, "scores");
      if (!s.length) throw new Error("scores: type at least one number");
      const tile = Live.integer(values, "tile", 1, 100000);
      let v = Live.list(values, "values");
      if (!v.length)
        v = s.map(function (_, j) {
          return j;
        });
      if (v.length !== s.length) {
        throw new Error("values: " + v.length + " numbers for " + s.length + " scores");
      }
      let m = -Infinity,
        r = 0,
        a = 0;
      const out = { m: [], r: [], out: [], alpha: [], keys: [] };
      for (let start = 0; start < s.length; start += tile) {
        const stop = Math.min(start + tile, s.length);
        const block = s.slice(start, stop);
        const mNew = Math.max(m, Math.max.apply(null, block));
        const alpha = Math.exp(m - mNew); // 0 at the first tile
        let sum = 0,
          acc = 0;
        for (let j = start; j < stop; j++) {
          const p = Math.exp(s[j] - mNew);
          sum += p;
          acc += p * v[j];
        }
        r = alpha * r + sum;
        a = alpha * a + acc;
        m = mNew;
        out.m.push(m);
        out.r.push(r);
        out.out.push(a / r);
        out.alpha.push(alpha);
        out.keys.push([start, stop - 1]);
      }
      const top = Math.max.apply(null, s);
      const e = s.map(function (x) {
        return Math.exp(x - top);
      });
      const total = e.reduce(function (x, y) {
        return x + y;
      }, 0);
      out.softmax = e.map(function (x) {
        return x / total;
      });
      out.exact = out.softmax.reduce(function (acc, p, j) {
        return acc + p * v[j];
      }, 0);
      out.scores = s;
      out.values = v;
      out.tile = tile;
      return out;
    },
    view: function (box, r) {
      const rows = r.m.map(function (m, t) {
        return [m, r.alpha[t], r.r[t], r.out[t]];
      });
      const t = Live.table(rows, {
        caption: "after each tile (" + r.tile + " keys per tile)",
        rows: r.keys.map(function (k) {
          return "keys " + k[0] + (k[1] > k[0] ? "–" + k[1] : "");
        }),
        cols: ["max m", "rescale", "r", "a / r"],
        digits: 4,
      });
      box.append(
        chart(r),
        t,
        el("p", {
          class: "live-hint",
          text:
            "m: the largest score so far; rescale: " +
            "e^(m_old − m), the factor the old r and a are multiplied by; " +
            "r: the sum of e^(s_j − m) over the keys seen; a / r: the output so far.",
        }),
        el("p", {
          class: "live-strong",
          text:
            "exact softmax output: " +
            Live.fmt(r.exact, 6) +
            "; after the last tile: " +
            Live.fmt(r.out[r.out.length - 1], 6),
        }),
      );
    },
  });
})();
