// Chapter 01's tokenizer playground: the reader's text, encoded in the page
// by js-tiktoken with the chapter's own tokenizer (ranks exported by
// tools/live_figures.py) or GPT-2's, cl100k_base's or o200k_base's.
// A vocabulary's script is added only when the reader picks it.
// Stepping through the merges is encoding with the first k merges' ranks.
// Output JSON: ids (the whole encoding), tokens, bytes, characters, and for
// the chapter's tokenizer the merge steps on this text.
(function () {
  "use strict";
  const el = Live.el;
  const CHOICES = [
    ["course", "this chapter's (Shakespeare, 8,192)"],
    ["gpt2", "GPT-2 (50,257)"],
    ["cl100k_base", "cl100k_base (GPT-4)"],
    ["o200k_base", "o200k_base (GPT-4o)"],
  ];
  const encoders = {}; // "name" or "course@k" -> Tiktoken
  const START = "To be, or not to be: that is the question.";

  function vocab(name) {
    return Live.loadScript("js-tiktoken.js")
      .then(function () {
        return Live.loadScript("vocab/" + name + ".js");
      })
      .then(function () {
        return window.LIVE_VOCAB[name];
      });
  }

  function encoder(name, ranks, k) {
    const key = k === undefined ? name : name + "@" + k;
    if (!encoders[key]) {
      let r = ranks;
      if (k !== undefined) {
        // the 256 bytes and the first k merges
        const tokens = ranks.bpe_ranks.split(" ").slice(2, 2 + 256 + k);
        r = {
          pat_str: ranks.pat_str,
          special_tokens: ranks.special_tokens,
          bpe_ranks: "! 0 " + tokens.join(" "),
        };
      }
      encoders[key] = new window.jsTiktoken.Tiktoken(r);
    }
    return encoders[key];
  }

  // The merges that fire on this text, in order: every id of the merge
  // trees of the final tokens (a merge made token 256 + i from merges[i]).
  function mergeSteps(ids, merges) {
    const seen = new Set();
    const stack = ids.filter(function (i) {
      return i >= 256;
    });
    while (stack.length) {
      const id = stack.pop();
      if (seen.has(id)) continue;
      seen.add(id);
      for (const part of merges[id - 256]) if (part >= 256) stack.push(part);
    }
    return Array.from(seen).sort(function (a, b) {
      return a - b;
    });
  }

  let last = { text: null, tokenizer: null };

  Live.register("bpe", {
    build: function (box, root) {
      const select = el("select", { name: "tokenizer" });
      for (const [value, label] of CHOICES) {
        select.appendChild(el("option", { value: value, text: label }));
      }
      box.append(
        Live.field(
          "your text",
          el("textarea", { name: "text", rows: "3", spellcheck: "false" }, [START]),
        ),
        Live.field("tokenizer", select),
        Live.field(
          "merge step",
          el("input", { name: "step", type: "range", min: "0", max: "0", value: "0" }),
          "this chapter's tokenizer only",
        ),
      );
      root.querySelector('[name="text"]').value = START;
    },
    compute: function (values, root) {
      const name = values.tokenizer;
      const text = values.text;
      return vocab(name).then(function (ranks) {
        const enc = encoder(name, ranks);
        const ids = enc.encode(text, [], []); // special strings are plain text
        const result = {
          tokenizer: name,
          ids: ids,
          tokens: ids.length,
          bytes: new TextEncoder().encode(text).length,
          characters: Array.from(text).length,
        };
        const slider = root.querySelector('[name="step"]');
        if (name === "course") {
          const steps = mergeSteps(ids, ranks.merges);
          const fresh = text !== last.text || name !== last.tokenizer;
          slider.max = String(steps.length);
          slider.disabled = false;
          if (fresh) slider.value = String(steps.length);
          const step = Number(slider.value);
          // after `step` merges of this text: the vocabulary up to its last one
          const k = step === 0 ? 0 : steps[step - 1] - 255;
          const shown =
            step === steps.length ? ids : encoder(name, ranks, k).encode(text, [], []);
          result.steps = steps;
          result.step = step;
          result.step_ids = shown;
          result.merge = step === 0 ? null : ranks.merges[steps[step - 1] - 256];
        } else {
          slider.max = "0";
          slider.value = "0";
          slider.disabled = true;
          result.step_ids = ids;
        }
        last = { text: text, tokenizer: name };
        // for view() only, not part of the JSON
        Object.defineProperty(result, "enc", { value: enc, enumerable: false });
        return result;
      });
    },
    view: function (box, r) {
      const enc = r.enc;
      const chips = el("div", { class: "live-chips" });
      const decoder = new TextDecoder("utf-8", { fatal: true });
      r.step_ids.forEach(function (id, i) {
        const bytes = enc.textMap.get(id);
        let label;
        try {
          label = decoder
            .decode(bytes)
            .replace(/ /g, "␣")
            .replace(/\n/g, "↵")
            .replace(/\t/g, "⇥")
            .replace(/\r/g, "␍");
        } catch (e) {
          // part of a character: show its bytes
          label = Array.from(bytes, function (b) {
            return b.toString(16).padStart(2, "0");
          }).join(" ");
        }
        const fresh = r.merge && id === r.steps[r.step - 1];
        chips.appendChild(
          el(
            "span",
            {
              class: "live-chip" + (fresh ? " live-fresh" : ""),
              "data-hue": String(i % 6),
            },
            [
              el("span", { class: "live-chip-text", text: label }),
              el("span", { class: "live-chip-id", text: String(id) }),
            ],
          ),
        );
      });
      const counts =
        r.bytes +
        " bytes, " +
        r.characters +
        " characters, " +
        r.tokens +
        " tokens" +
        (r.tokens ? " (" + (r.bytes / r.tokens).toFixed(2) + " bytes per token)" : "");
      box.append(el("p", { class: "live-counts", text: counts }));
      if (r.steps) {
        let what = "step " + r.step + " of " + r.steps.length;
        if (r.merge) {
          const piece = function (id) {
            return new TextDecoder().decode(enc.textMap.get(id)).replace(/ /g, "␣");
          };
          what +=
            ": '" +
            piece(r.merge[0]) +
            "' + '" +
            piece(r.merge[1]) +
            "' → " +
            r.steps[r.step - 1] +
            "; " +
            r.step_ids.length +
            " tokens";
        } else {
          what += ": the UTF-8 bytes, before any merge";
        }
        box.append(el("p", { class: "live-step", text: what }));
      }
      box.append(chips);
    },
  });
})();
