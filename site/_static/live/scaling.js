// Chapter 03's scaling factor, a seeded Monte Carlo in the page: `samples`
// pairs of a query and a key with d_k standard normal entries each
// (Live.rng(seed): mulberry32 and Box-Muller; for each sample the d_k
// entries of q, then the d_k of k). Their dot products have variance d_k;
// divided by sqrt(d_k), variance 1. Softmax saturation: the first 16 scores
// as one query's logits over 16 keys, with and without the scale.
// Output JSON: variance and variance_scaled (population variances), mean,
// top_weight and top_weight_scaled, and the two histograms (41 bins over
// +-4 sqrt(d_k), both).
(function () {
  "use strict";
  const el = Live.el;
  const KEYS = 16;
  const BINS = 41;

  function histogram(xs, half) {
    const counts = new Array(BINS).fill(0);
    for (const x of xs) {
      const b = Math.floor(((x + half) / (2 * half)) * BINS);
      counts[Math.min(BINS - 1, Math.max(0, b))] += 1;
    }
    return counts;
  }

  function softmax(xs) {
    const top = Math.max.apply(null, xs);
    const e = xs.map(function (x) {
      return Math.exp(x - top);
    });
    const s = e.reduce(function (a, b) {
      return a + b;
    }, 0);
    return e.map(function (x) {
      return x / s;
    });
  }

  function bars(counts, color, label, ceiling) {
    const W = 300,
      H = 110,
      top = ceiling || Math.max.apply(null, counts) || 1;
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + (H + 16));
    svg.setAttribute("class", "live-svg");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", label);
    const w = W / counts.length;
    counts.forEach(function (c, i) {
      const r = document.createElementNS(svg.namespaceURI, "rect");
      const h = (H * c) / top;
      r.setAttribute("x", (i * w + 0.5).toFixed(1));
      r.setAttribute("y", (H - h).toFixed(1));
      r.setAttribute("width", (w - 1).toFixed(1));
      r.setAttribute("height", h.toFixed(1));
      r.setAttribute("fill", color);
      svg.appendChild(r);
    });
    return svg;
  }

  Live.register("scaling", {
    build: function (box) {
      box.append(
        Live.field(
          "d_k",
          el("input", {
            name: "d_k",
            type: "number",
            min: "1",
            max: "1024",
            step: "1",
            value: "128",
          }),
          "1 to 1024",
        ),
        Live.field(
          "samples",
          el("input", {
            name: "samples",
            type: "number",
            min: "16",
            max: "20000",
            step: "1",
            value: "4000",
          }),
          "16 to 20,000",
        ),
        Live.field(
          "seed",
          el("input", {
            name: "seed",
            type: "number",
            min: "0",
            step: "1",
            value: "3",
          }),
          "any whole number",
        ),
      );
    },
    compute: function (values) {
      const d = Live.integer(values, "d_k", 1, 1024);
      const n = Live.integer(values, "samples", KEYS, 20000);
      const seed = Live.integer(values, "seed", 0, 4294967295);
      const rng = Live.rng(seed);
      const s = new Float64Array(n);
      const q = new Float64Array(d);
      for (let i = 0; i < n; i++) {
        for (let t = 0; t < d; t++) q[t] = rng.normal();
        let dot = 0;
        for (let t = 0; t < d; t++) dot += q[t] * rng.normal();
        s[i] = dot;
      }
      let mean = 0;
      for (const x of s) mean += x;
      mean /= n;
      let v = 0;
      for (const x of s) v += (x - mean) * (x - mean);
      v /= n;
      const c = 1 / Math.sqrt(d);
      const row = Array.from(s.slice(0, KEYS));
      const p = softmax(row);
      const pScaled = softmax(
        row.map(function (x) {
          return c * x;
        }),
      );
      const half = 4 * Math.sqrt(d);
      return {
        d_k: d,
        samples: n,
        seed: seed,
        mean: mean,
        variance: v,
        variance_scaled: v / d,
        std: Math.sqrt(v),
        std_scaled: Math.sqrt(v / d),
        weights: p,
        weights_scaled: pScaled,
        top_weight: Math.max.apply(null, p),
        top_weight_scaled: Math.max.apply(null, pScaled),
        range: half,
        histogram: histogram(s, half),
        // on the same axis, so the scaled scores look as narrow as they are
        histogram_scaled: histogram(
          Array.from(s, function (x) {
            return c * x;
          }),
          half,
        ),
      };
    },
    view: function (box, r) {
      const f = Live.fmt;
      box.append(
        el("div", { class: "live-panels" }, [
          el("figure", { class: "live-plot" }, [
            bars(r.histogram, "#d62728", "histogram of q·k"),
            el("figcaption", {
              text:
                "q·k over ±" +
                f(r.range, 1) +
                ": variance " +
                f(r.variance, 2) +
                " (d_k = " +
                r.d_k +
                ")",
            }),
          ]),
          el("figure", { class: "live-plot" }, [
            bars(r.histogram_scaled, "#1f77b4", "histogram of q·k / √d_k"),
            el("figcaption", {
              text: "q·k / √d_k on the same axis: variance " + f(r.variance_scaled, 3),
            }),
          ]),
          el("figure", { class: "live-plot" }, [
            bars(r.weights, "#d62728", "softmax weights without the scale", 1),
            el("figcaption", {
              text: "one query, 16 keys, no scale: top weight " + f(r.top_weight, 3),
            }),
          ]),
          el("figure", { class: "live-plot" }, [
            bars(r.weights_scaled, "#1f77b4", "softmax weights with the scale", 1),
            el("figcaption", {
              text: "with 1/√d_k: top weight " + f(r.top_weight_scaled, 3),
            }),
          ]),
        ]),
      );
    },
  });
})();
