// The contract every live figure of the course keeps (tools/live_figures.py).
//
// A figure is an element <div data-live="NAME">. Its script calls
//   Live.register(NAME, {build(root), compute(values, root), view(root, result)})
// build() adds the figure's controls: ordinary form elements with `name`
// attributes. After every change, Live reads them all (Live.values), runs
// compute() (it may return a Promise) and writes the result as JSON into the
// figure's [data-output] element; view() shows the same numbers to the
// reader. root.dataset.state is "busy" while a result is on its way, then
// "done" or "error"; root.dataset.version counts the results written.
(function () {
  "use strict";
  if (window.Live) return; // one copy per page
  const here = document.currentScript ? document.currentScript.src : "";
  const Live = (window.Live = { base: here.slice(0, here.lastIndexOf("/") + 1) });
  const figures = {};
  const loading = {};

  // A classic <script> from the site's _static/live folder, once: from
  // file:// pages, fetch() and module imports of local files are refused.
  Live.loadScript = function (rel) {
    if (!loading[rel]) {
      loading[rel] = new Promise(function (resolve, reject) {
        const s = document.createElement("script");
        s.src = Live.base + rel;
        s.onload = function () {
          resolve();
        };
        s.onerror = function () {
          delete loading[rel];
          reject(new Error("could not load " + rel));
        };
        document.head.appendChild(s);
      });
    }
    return loading[rel];
  };

  // el("input", {name: "m", type: "number"}, [children]) -> an element
  Live.el = function (tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v == null) continue;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of [].concat(children || [])) {
      if (c != null)
        e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  };

  // svg("line", {x1: 0, x2: 10, stroke: "#999"}, "text") -> an SVG element
  Live.svg = function (tag, attrs, text) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text) e.textContent = text;
    return e;
  };

  // A labelled control: <label>text <input ...></label>
  Live.field = function (label, control, hint) {
    return Live.el("label", { class: "live-field" }, [
      Live.el("span", { class: "live-label", text: label }),
      control,
      hint ? Live.el("span", { class: "live-hint", text: hint }) : null,
    ]);
  };

  // {name: value} of every named form element: checkboxes give booleans,
  // the rest their text
  Live.values = function (root) {
    const out = {};
    for (const e of root.querySelectorAll("[name]")) {
      if (!("value" in e)) continue;
      out[e.name] = e.type === "checkbox" ? e.checked : e.value;
    }
    return out;
  };

  // An integer input's value in [lo, hi], or an Error naming it
  Live.integer = function (values, name, lo, hi) {
    const text = String(values[name]).trim();
    if (!/^-?\d+$/.test(text))
      throw new Error(name + " = '" + text + "': not an integer");
    const v = Number(text);
    if (v < lo || v > hi)
      throw new Error(name + " = " + v + ": must be " + lo + " to " + hi);
    return v;
  };

  Live.number = function (values, name) {
    const text = String(values[name]).trim();
    const v = Number(text);
    if (text === "" || !Number.isFinite(v))
      throw new Error(name + " = '" + text + "': not a number");
    return v;
  };

  // "1, 2.5 -3" -> [1, 2.5, -3], or an Error naming the entry
  Live.list = function (values, name) {
    const text = String(values[name] || "").trim();
    if (!text) return [];
    return text
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(function (t) {
        const v = Number(t);
        if (!Number.isFinite(v))
          throw new Error(name + ": '" + t + "' is not a number");
        return v;
      });
  };

  // A seeded generator (mulberry32) and standard normals from it
  // (Box-Muller, both values used), so a figure's samples are the same on
  // every visit and the tests can draw them again.
  Live.rng = function (seed) {
    let a = seed >>> 0;
    let spare = null;
    const next = function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    };
    const uniform = function () {
      return (next() + 0.5) / 4294967296;
    };
    const normal = function () {
      if (spare !== null) {
        const s = spare;
        spare = null;
        return s;
      }
      const r = Math.sqrt(-2 * Math.log(uniform()));
      const angle = 2 * Math.PI * uniform();
      spare = r * Math.sin(angle);
      return r * Math.cos(angle);
    };
    return { uint32: next, uniform: uniform, normal: normal };
  };

  Live.fmt = function (x, digits) {
    if (x === null || x === undefined) return "";
    if (x === -Infinity) return "−∞";
    if (!Number.isFinite(x)) return String(x);
    const d = digits === undefined ? 3 : digits;
    const s =
      Math.abs(x) >= 1e5 || (Math.abs(x) < 1e-3 && x !== 0)
        ? x.toExponential(d - 1)
        : x.toFixed(d);
    return s.replace("-", "−");
  };

  // A table of numbers with optional row and column labels
  Live.table = function (rows, opts) {
    opts = opts || {};
    const t = Live.el("table", { class: "live-table" });
    if (opts.caption) t.appendChild(Live.el("caption", { text: opts.caption }));
    if (opts.cols) {
      const tr = Live.el("tr", {}, [Live.el("th", { text: opts.corner || "" })]);
      for (const c of opts.cols)
        tr.appendChild(Live.el("th", { scope: "col", text: c }));
      t.appendChild(Live.el("thead", {}, tr));
    }
    const body = Live.el("tbody");
    rows.forEach(function (row, i) {
      const tr = Live.el("tr");
      if (opts.rows)
        tr.appendChild(Live.el("th", { scope: "row", text: opts.rows[i] }));
      row.forEach(function (v, j) {
        const masked = opts.masked && opts.masked(i, j);
        const td = Live.el("td", {
          class: masked ? "live-masked" : null,
          text: masked ? "masked" : Live.fmt(v, opts.digits),
        });
        if (opts.shade && !masked) td.style.background = opts.shade(v);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  };

  function mount(root, fig) {
    if (root.dataset.mounted) return;
    root.dataset.mounted = "1";
    root.dataset.version = "0";
    const controls = Live.el("div", { class: "live-controls" });
    const view = Live.el("div", { class: "live-view", "aria-live": "polite" });
    const status = Live.el("p", { class: "live-status", role: "status" });
    const output = Live.el("pre", { class: "live-json", "data-output": true });
    const json = Live.el("details", { class: "live-json-box" }, [
      Live.el("summary", { text: "These numbers as JSON" }),
      output,
    ]);
    root.append(controls, status, view, json);
    fig.build(controls, root);
    let ticket = 0;
    const update = function () {
      const mine = ++ticket;
      root.dataset.state = "busy";
      const started = performance.now();
      Promise.resolve()
        .then(function () {
          return fig.compute(Live.values(root), root);
        })
        .then(
          function (result) {
            if (mine !== ticket) return;
            output.textContent = JSON.stringify(result);
            view.replaceChildren();
            fig.view(view, result, root);
            status.textContent = "";
            root.dataset.ms = (performance.now() - started).toFixed(1);
            root.dataset.state = "done";
            root.dataset.version = String(Number(root.dataset.version) + 1);
          },
          function (err) {
            if (mine !== ticket) return;
            output.textContent = JSON.stringify({ error: String(err.message || err) });
            status.textContent = String(err.message || err);
            root.dataset.state = "error";
            root.dataset.version = String(Number(root.dataset.version) + 1);
          },
        );
    };
    root.liveUpdate = update;
    root.addEventListener("input", update);
    root.addEventListener("change", update);
    update();
  }

  Live.register = function (name, fig) {
    figures[name] = fig;
    for (const root of document.querySelectorAll('[data-live="' + name + '"]')) {
      mount(root, fig);
    }
  };
})();
