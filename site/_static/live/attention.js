// Chapter 04's worked example, editable: Q, K and V as grids of numbers
// (3 x 2 as in the chapter, S up to 6, d_k and d_v up to 4), the scale and
// the causal mask as checkboxes. Every intermediate is recomputed in the
// page, in float64: QK^T, the scaled logits, the masked logits, A and O.
// Output JSON: scores, logits, masked (null where masked), A, O.
(function () {
  "use strict";
  const el = Live.el;
  const START = {
    Q: [
      [1, 0],
      [0, 2],
      [1, 1],
    ],
    K: [
      [1, 0],
      [1, 1],
      [0, 2],
    ],
    V: [
      [10, 1],
      [20, 2],
      [30, 3],
    ],
  };
  const SIZES = { S: [1, 6], d_k: [1, 4], d_v: [1, 4] };

  function sizeSelect(name, value) {
    const s = el("select", { name: name });
    for (let i = SIZES[name][0]; i <= SIZES[name][1]; i++) {
      s.appendChild(
        el("option", { value: String(i), text: String(i), selected: i === value }),
      );
    }
    return s;
  }

  // The grid of number inputs for one matrix, keeping the values already typed
  function grid(box, which, rows, cols) {
    const old = {};
    for (const e of box.querySelectorAll("input")) old[e.name] = e.value;
    box.replaceChildren(el("span", { class: "live-label", text: which }));
    const t = el("div", { class: "live-grid", style: "--cols: " + cols });
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const name = which + "." + i + "." + j;
        const start = (START[which][i] || [])[j];
        const value = name in old ? old[name] : String(start === undefined ? 0 : start);
        t.appendChild(
          el("input", {
            name: name,
            type: "number",
            step: "any",
            value: value,
            "aria-label": which + " row " + i + ", column " + j,
          }),
        );
      }
    }
    box.appendChild(t);
  }

  function relayout(root) {
    const S = Number(root.querySelector('[name="S"]').value);
    const dk = Number(root.querySelector('[name="d_k"]').value);
    const dv = Number(root.querySelector('[name="d_v"]').value);
    grid(root.querySelector(".live-Q"), "Q", S, dk);
    grid(root.querySelector(".live-K"), "K", S, dk);
    grid(root.querySelector(".live-V"), "V", S, dv);
  }

  function matrix(values, which, rows, cols) {
    const m = [];
    for (let i = 0; i < rows; i++) {
      const row = [];
      for (let j = 0; j < cols; j++)
        row.push(Live.number(values, which + "." + i + "." + j));
      m.push(row);
    }
    return m;
  }

  Live.register("attention", {
    build: function (box, root) {
      box.append(
        Live.field("tokens S", sizeSelect("S", 3)),
        Live.field("d_k", sizeSelect("d_k", 2)),
        Live.field("d_v", sizeSelect("d_v", 2)),
        Live.field(
          "scale by 1/√d_k",
          el("input", { name: "scale", type: "checkbox", checked: true }),
        ),
        Live.field(
          "causal mask",
          el("input", { name: "mask", type: "checkbox", checked: true }),
        ),
        el("div", { class: "live-matrices" }, [
          el("div", { class: "live-Q" }),
          el("div", { class: "live-K" }),
          el("div", { class: "live-V" }),
        ]),
      );
      relayout(root);
      for (const n of ["S", "d_k", "d_v"]) {
        box.querySelector('[name="' + n + '"]').addEventListener("change", function () {
          relayout(root);
        });
      }
    },
    compute: function (values) {
      const S = Live.integer(values, "S", 1, 6);
      const dk = Live.integer(values, "d_k", 1, 4);
      const dv = Live.integer(values, "d_v", 1, 4);
      const Q = matrix(values, "Q", S, dk);
      const K = matrix(values, "K", S, dk);
      const V = matrix(values, "V", S, dv);
      const c = values.scale ? 1 / Math.sqrt(dk) : 1;
      const scores = Q.map(function (q) {
        return K.map(function (k) {
          return q.reduce(function (s, x, t) {
            return s + x * k[t];
          }, 0);
        });
      });
      const logits = scores.map(function (row) {
        return row.map(function (x) {
          return c * x;
        });
      });
      const masked = logits.map(function (row, i) {
        return row.map(function (x, j) {
          return values.mask && j > i ? null : x;
        });
      });
      const A = masked.map(function (row) {
        const seen = row.filter(function (x) {
          return x !== null;
        });
        const top = Math.max.apply(null, seen);
        const e = row.map(function (x) {
          return x === null ? 0 : Math.exp(x - top);
        });
        const sum = e.reduce(function (a, b) {
          return a + b;
        }, 0);
        return e.map(function (x) {
          return x / sum;
        });
      });
      const O = A.map(function (a) {
        return V[0].map(function (_, t) {
          return a.reduce(function (s, w, j) {
            return s + w * V[j][t];
          }, 0);
        });
      });
      return {
        S: S,
        d_k: dk,
        d_v: dv,
        scale: c,
        mask: values.mask,
        scores: scores,
        logits: logits,
        masked: masked,
        A: A,
        O: O,
      };
    },
    view: function (box, r) {
      const keys = r.scores[0].map(function (_, j) {
        return "key " + j;
      });
      const queries = r.scores.map(function (_, i) {
        return "query " + i;
      });
      const hidden = function (i, j) {
        return r.mask && j > i;
      };
      const blue = function (v) {
        return "rgba(31, 119, 180, " + (0.85 * v).toFixed(3) + ")";
      };
      const cols = r.O[0].map(function (_, t) {
        return "O col " + t;
      });
      box.append(
        el("div", { class: "live-panels" }, [
          Live.table(r.scores, { caption: "QKᵀ", rows: queries, cols: keys }),
          Live.table(r.logits, {
            caption: r.scale === 1 ? "logits (no scale)" : "logits × 1/√" + r.d_k,
            rows: queries,
            cols: keys,
          }),
          Live.table(r.logits, {
            caption: "masked logits",
            rows: queries,
            cols: keys,
            masked: hidden,
          }),
          Live.table(r.A, {
            caption: "A = softmax by row",
            rows: queries,
            cols: keys,
            masked: hidden,
            shade: blue,
          }),
          Live.table(r.O, { caption: "O = A V", rows: queries, cols: cols, digits: 2 }),
        ]),
      );
    },
  });
})();
