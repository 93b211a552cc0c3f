// Chapter 09's trained model reads the reader's sentence, in the page.
//
// The model is the ONNX graph DecoderLM.export_onnx wrote (chapter 09), run
// by onnxruntime-web; the text is tokenized by js-tiktoken with the
// chapter's own tokenizer. tools/live_model.py vendors both and writes every
// file this script adds as a classic <script>: opened from file://, Chromium
// refuses fetch() and module imports of local files. Nothing is loaded until
// the reader asks for the model (about 22 MB). onnxruntime-web then needs
// four settings to run from file://: its classic build (ort.wasm.min.js),
// one thread, the .wasm bytes handed over (wasmBinary, from base64), and its
// glue module as a blob URL.
//
// Output JSON: the text read, ids and tokens (its last max_seq_len tokens),
// dropped (how many came before them), attention[layer][head][query][key],
// top (the next tokens the model expects: id, token, p, logit) and logits
// (the last position's).
(function () {
  "use strict";
  const el = Live.el;
  const START = "ROMEO:\nBut, soft! what light through yonder window breaks?\n";
  const TOP = 10;
  const REST_MS = 120;
  let calls = 0;
  let requested = false;
  let loading = null;          // a Promise of {session, enc, config, ort}
  let running = Promise.resolve();  // one run of the session at a time
  const CSS = ".live-heads{display:flex;flex-wrap:wrap;gap:.6rem 1rem}" +
    ".live-head{margin:0;width:150px;display:flex;flex-direction:column;gap:.1rem}" +
    ".live-map{width:150px;height:150px;image-rendering:pixelated}" +
    ".live-head figcaption{font-size:.8rem;font-weight:600}" +
    ".live-top{margin:.5rem 0}.live-bar-cell{width:10rem;text-align:left!important}" +
    ".live-bar{display:inline-block;height:.7rem;background:#6a4c93}" +
    ".live-load{padding:.25rem .7rem;font:inherit}";
  document.head.appendChild(el("style", {text: CSS}));

  function bytes(base64) {
    const text = atob(base64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }

  function load() {
    if (!loading) {
      loading = Live.loadScript("js-tiktoken.js")
        .then(function () { return Live.loadScript("model/ort.wasm.min.js"); })
        .then(function () { return Live.loadScript("model/ort-wasm.js"); })
        .then(function () { return Live.loadScript("model/ch09.js"); })
        .then(function () {
          const ort = window.ort;
          const files = window.LIVE_ORT;
          ort.env.wasm.numThreads = 1;          // no workers, no SharedArrayBuffer
          ort.env.wasm.wasmBinary = bytes(files.wasm);
          const glue = new Blob([files.glue], {type: "text/javascript"});
          ort.env.wasm.wasmPaths = {mjs: URL.createObjectURL(glue)};
          const m = window.LIVE_MODEL;
          const enc = new window.jsTiktoken.Tiktoken(m.tokenizer);
          return ort.InferenceSession.create(bytes(m.onnx),
                                             {executionProviders: ["wasm"]})
            .then(function (session) {
              return {session: session, enc: enc, config: m.config, ort: ort};
            });
        });
      loading.catch(function () { loading = null; });  // a retry may load again
    }
    return loading;
  }

  // A token's text: its bytes as UTF-8, U+FFFD for part of a character
  function tokenText(enc, id) {
    return new TextDecoder("utf-8").decode(enc.textMap.get(id));
  }

  function shown(text) {
    return text.replace(/ /g, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥")
      .replace(/\r/g, "␍");
  }

  // What a chip shows: the token's text, or its bytes in hex when it holds
  // part of a character (an emoji or a CJK character is often 2 to 4 tokens)
  function label(enc, id) {
    const b = enc.textMap.get(id);
    try {
      return shown(new TextDecoder("utf-8", {fatal: true}).decode(b));
    } catch (e) {
      return Array.from(b, function (x) { return x.toString(16).padStart(2, "0"); }).join(" ");
    }
  }

  function run(m, ids) {
    const feeds = {ids: new m.ort.Tensor("int32", Int32Array.from(ids), [1, ids.length])};
    running = running.then(function () { return m.session.run(feeds); },
                           function () { return m.session.run(feeds); });
    return running;
  }

  function result(m, ids, out) {
    const S = ids.length;
    const V = m.config.vocab_size;
    const L = m.config.n_layers;
    const H = m.config.n_heads;
    const A = out.attention.data;               // (L, 1, H, S, S)
    const attention = [];
    for (let l = 0; l < L; l++) {
      const layer = [];
      for (let h = 0; h < H; h++) {
        const rows = [];
        for (let i = 0; i < S; i++) {
          const at = ((l * H + h) * S + i) * S;
          rows.push(Array.from(A.subarray(at, at + S)));
        }
        layer.push(rows);
      }
      attention.push(layer);
    }
    const logits = Array.from(out.logits.data.subarray((S - 1) * V, S * V));
    const max = Math.max.apply(null, logits);
    let sum = 0;
    for (const z of logits) sum += Math.exp(z - max);
    const order = logits.map(function (z, i) { return i; })
      .sort(function (a, b) { return logits[b] - logits[a] || a - b; });
    const top = order.slice(0, TOP).map(function (id) {
      return {id: id, token: tokenText(m.enc, id), logit: logits[id],
              p: Math.exp(logits[id] - max) / sum};
    });
    return {attention: attention, top: top, logits: logits};
  }

  // viridis at t in [0, 1], from five of its colours
  const STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98],
                 [253, 231, 37]];
  function viridis(t) {
    const x = Math.min(Math.max(t, 0), 1) * (STOPS.length - 1);
    const i = Math.min(Math.floor(x), STOPS.length - 2);
    const f = x - i;
    const c = STOPS[i].map(function (v, k) { return Math.round(v + f * (STOPS[i + 1][k] - v)); });
    return "rgb(" + c.join(",") + ")";
  }

  function headMap(A, tokens, title, note) {
    const S = A.length;
    const cell = Math.max(2, Math.floor(150 / S));
    const canvas = el("canvas", {width: String(S * cell), height: String(S * cell),
                                 class: "live-map", role: "img",
                                 "aria-label": title + ": attention weights, row query, column key"});
    const g = canvas.getContext("2d");
    for (let i = 0; i < S; i++) {
      for (let j = 0; j < S; j++) {
        g.fillStyle = j > i ? "#d0d0d0" : viridis(A[i][j]);
        g.fillRect(j * cell, i * cell, cell, cell);
      }
    }
    const caption = el("figcaption", {text: title});
    const last = A[S - 1];
    let best = 0;
    for (let j = 1; j < S; j++) if (last[j] > last[best]) best = j;
    const readout = el("span", {class: "live-hint",
      text: "last token → " + tokens[best] + " (" + Live.fmt(last[best], 2) + ")"});
    canvas.addEventListener("mousemove", function (e) {
      const box = canvas.getBoundingClientRect();
      const j = Math.floor((e.clientX - box.left) / box.width * S);
      const i = Math.floor((e.clientY - box.top) / box.height * S);
      if (i < 0 || j < 0 || i >= S || j >= S) return;
      readout.textContent = tokens[i] + " → " + tokens[j] + ": " +
        (j > i ? "masked" : Live.fmt(A[i][j], 3));
    });
    return el("figure", {class: "live-plot live-head"},
              [canvas, caption, note ? el("span", {class: "live-hint", text: note}) : null,
               readout]);
  }

  Live.register("model", {
    build: function (box, root) {
      const button = el("button", {type: "button", class: "live-load",
                                   text: "Run the model in this page"});
      button.addEventListener("click", function () {
        requested = true;
        button.disabled = true;
        button.textContent = "loading the model…";
        root.liveUpdate();
      });
      box.append(
        Live.field("your text", el("textarea", {name: "text", rows: "3", spellcheck: "false"},
                                   [START])),
        Live.field("the model", button,
                   "loads onnxruntime-web and the weights, about 22 MB, from this site"));
      root.querySelector('[name="text"]').value = START;
    },
    compute: function (values, root) {
      if (!requested) {
        return {loaded: false, ids: [], tokens: [], attention: [], top: []};
      }
      const text = values.text;
      const mine = ++calls;
      // typing sends an input event per key: run the model only once the
      // text has rested a moment (a superseded call's result is dropped)
      return load().then(function (m) {
        return new Promise(function (resolve) { setTimeout(resolve, REST_MS); })
          .then(function () { return mine === calls ? m : null; });
      }).then(function (m) {
        if (m === null) return {superseded: true};
        const button = root.querySelector(".live-load");
        button.textContent = "model loaded: type above";
        const all = m.enc.encode(text, [], []);   // special strings are plain text
        const T = m.config.max_seq_len;
        const ids = all.slice(Math.max(0, all.length - T));
        const base = {loaded: true, text: text, ids: ids,
                      tokens: ids.map(function (id) { return tokenText(m.enc, id); }),
                      dropped: all.length - ids.length, max_seq_len: T,
                      n_heads: m.config.n_heads, n_kv_heads: m.config.n_kv_heads};
        // for view() only, not part of the JSON
        Object.defineProperty(base, "labels", {enumerable: false,
          value: ids.map(function (id) { return label(m.enc, id); })});
        if (!ids.length) return Object.assign(base, {attention: [], top: [], logits: []});
        return run(m, ids).then(function (out) {
          const r = Object.assign(base, result(m, ids, out));
          Object.defineProperty(r, "topLabels", {enumerable: false,
            value: r.top.map(function (t) { return label(m.enc, t.id); })});
          return r;
        });
      }, function (err) {
        const button = root.querySelector(".live-load");
        button.disabled = false;
        button.textContent = "Run the model in this page";
        throw err;
      });
    },
    view: function (box, r) {
      if (!r.loaded) {
        box.append(el("p", {class: "live-counts",
          text: "The model runs here once you ask for it (the button above)."}));
        return;
      }
      if (!r.ids.length) {
        box.append(el("p", {class: "live-counts", text: "Type some text: the model needs at least one token."}));
        return;
      }
      box.append(el("p", {class: "live-counts", text: r.dropped
        ? "The model reads the last " + r.ids.length + " of " + (r.ids.length + r.dropped) +
          " tokens: its context is " + r.max_seq_len + " tokens."
        : r.ids.length + " tokens."}));
      const chips = el("div", {class: "live-chips"});
      r.tokens.forEach(function (t, i) {
        chips.appendChild(el("span", {class: "live-chip", "data-hue": String(i % 6)}, [
          el("span", {class: "live-chip-text", text: r.labels[i]}),
          el("span", {class: "live-chip-id", text: String(r.ids[i])})]));
      });
      box.append(chips);

      const rows = r.top.map(function (t, k) {
        return el("tr", {}, [
          el("td", {class: "live-chip-text", text: r.topLabels[k]}),
          el("td", {text: Live.fmt(100 * t.p, 1) + "%"}),
          el("td", {class: "live-bar-cell"}, el("span", {class: "live-bar",
            style: "width:" + (100 * t.p).toFixed(1) + "%"}))]);
      });
      box.append(el("table", {class: "live-table live-top"}, [
        el("caption", {text: "What the model expects next"}),
        el("thead", {}, el("tr", {}, [el("th", {text: "token"}), el("th", {text: "p"}),
                                     el("th", {text: ""})])),
        el("tbody", {}, rows)]));

      const group = r.n_heads / r.n_kv_heads;
      r.attention.forEach(function (layer, l) {
        const heads = el("div", {class: "live-heads"});
        layer.forEach(function (A, h) {
          heads.appendChild(headMap(A, r.labels, "layer " + l + ", head " + h,
                                    "kv head " + Math.floor(h / group)));
        });
        box.append(el("p", {class: "live-strong",
          text: "Layer " + l + ": every head's weights (row: query, column: key; grey: a future key)"}),
                   heads);
      });
    },
  });
})();
