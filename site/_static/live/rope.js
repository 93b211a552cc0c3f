// Chapter 06's RoPE at any position: a d = 64 query and key (standard
// normal entries from Live.rng(6), q first), q turned to position m and k to
// position n, pair i (entries 2i, 2i + 1) by the angle position * theta_i with
// theta_i = 10000^(-2i/d), in float64. The score q_rot . k_rot equals the
// score with q at 0 and k at n - m.
// Output JSON: q, k, q_rot, k_rot, score, score_at_origin, and theta.
(function () {
  "use strict";
  const el = Live.el;
  const svgEl = Live.svg;
  const D = 64,
    BASE = 10000,
    MAX = 100000;
  const rng = Live.rng(6);
  const q = [],
    k = [];
  for (let t = 0; t < D; t++) q.push(rng.normal());
  for (let t = 0; t < D; t++) k.push(rng.normal());
  const theta = [];
  for (let i = 0; i < D / 2; i++) theta.push(Math.pow(BASE, (-2 * i) / D));

  function rotate(x, position) {
    const out = x.slice();
    for (let i = 0; i < D / 2; i++) {
      const a = position * theta[i],
        c = Math.cos(a),
        s = Math.sin(a);
      out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
      out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
    }
    return out;
  }

  function dot(a, b) {
    return a.reduce(function (s, x, t) {
      return s + x * b[t];
    }, 0);
  }

  function arrows(r) {
    const i = r.pair,
      R = 90;
    const pts = [
      [r.q, "#1f77b4", "q", 0.35, "4 3"],
      [r.k, "#ff7f0e", "k", 0.35, "4 3"],
      [r.q_rot, "#1f77b4", "q at m", 1, null],
      [r.k_rot, "#ff7f0e", "k at n", 1, null],
    ];
    const scale =
      R /
      Math.max.apply(
        null,
        pts.map(function (p) {
          return Math.hypot(p[0][2 * i], p[0][2 * i + 1]);
        }),
      );
    const svg = svgEl("svg", {
      viewBox: "-120 -120 240 240",
      class: "live-svg live-square",
      role: "img",
      "aria-label": "pair " + i + " of q and k, before and after turning",
    });
    svg.appendChild(
      svgEl("circle", { cx: 0, cy: 0, r: R, fill: "none", stroke: "#ccc" }),
    );
    for (const [v, color, name, opacity, dash] of pts) {
      const x = scale * v[2 * i],
        y = -scale * v[2 * i + 1];
      svg.appendChild(
        svgEl("line", {
          x1: 0,
          y1: 0,
          x2: x.toFixed(1),
          y2: y.toFixed(1),
          stroke: color,
          "stroke-width": 3,
          opacity: opacity,
          "stroke-dasharray": dash || "none",
        }),
      );
      const label = svgEl(
        "text",
        {
          x: (1.12 * x).toFixed(1),
          y: (1.12 * y + 4).toFixed(1),
          fill: color,
          "text-anchor": "middle",
          "font-size": 11,
          opacity: opacity,
        },
        name,
      );
      svg.appendChild(label);
    }
    return svg;
  }

  Live.register("rope", {
    build: function (box) {
      box.append(
        Live.field(
          "query position m",
          el("input", {
            name: "m",
            type: "number",
            min: "0",
            max: String(MAX),
            step: "1",
            value: "0",
          }),
        ),
        Live.field(
          "key position n",
          el("input", {
            name: "n",
            type: "number",
            min: "0",
            max: String(MAX),
            step: "1",
            value: "3",
          }),
        ),
        Live.field(
          "pair drawn",
          el("input", {
            name: "pair",
            type: "number",
            min: "0",
            max: String(D / 2 - 1),
            step: "1",
            value: "0",
          }),
          "0 to " + (D / 2 - 1),
        ),
      );
    },
    compute: function (values) {
      const m = Live.integer(values, "m", 0, MAX);
      const n = Live.integer(values, "n", 0, MAX);
      const pair = Live.integer(values, "pair", 0, D / 2 - 1);
      const qr = rotate(q, m),
        kr = rotate(k, n);
      return {
        d: D,
        base: BASE,
        m: m,
        n: n,
        pair: pair,
        theta: theta,
        q: q,
        k: k,
        q_rot: qr,
        k_rot: kr,
        score: dot(qr, kr),
        score_at_origin: dot(q, rotate(k, n - m)),
      };
    },
    view: function (box, r) {
      const f = Live.fmt,
        i = r.pair;
      const angle = function (p) {
        return p * r.theta[i];
      };
      const text = [
        "pair " +
          i +
          ": θ = " +
          f(r.theta[i], 4) +
          " rad per token, so q turns by " +
          f(angle(r.m), 3) +
          " rad and k by " +
          f(angle(r.n), 3) +
          " rad",
        "score q(m)·k(n) = " + f(r.score, 6),
        "score with q at 0 and k at n − m = " +
          f(r.score_at_origin, 6) +
          " (difference " +
          f(r.score - r.score_at_origin, 2) +
          ")",
      ];
      const head = [0, 1, 2, 3, 2 * i, 2 * i + 1].filter(function (x, j, a) {
        return a.indexOf(x) === j;
      });
      box.append(
        el("div", { class: "live-panels" }, [
          arrows(r),
          el("div", {}, [
            el("p", { text: text[0] }),
            el("p", { class: "live-strong", text: text[1] }),
            el("p", { class: "live-strong", text: text[2] }),
            Live.table(
              [
                head.map(function (t) {
                  return r.q[t];
                }),
                head.map(function (t) {
                  return r.q_rot[t];
                }),
                head.map(function (t) {
                  return r.k[t];
                }),
                head.map(function (t) {
                  return r.k_rot[t];
                }),
              ],
              {
                caption: "some of the 64 entries",
                rows: ["q", "q at m", "k", "k at n"],
                cols: head.map(function (t) {
                  return "x" + t;
                }),
                digits: 4,
              },
            ),
          ]),
        ]),
      );
    },
  });
})();
