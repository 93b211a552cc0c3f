// A player's frames, swapped as its controls move (netcl_lite.viz.player).
(function () {
  "use strict";
  const root = document.currentScript.parentNode;
  const data = JSON.parse(root.querySelector(".nl-player-data").textContent);
  const img = root.querySelector(".nl-player-frame");
  const inputs = root.querySelectorAll("[data-axis]");

  function show() {
    let index = 0;
    const said = [];
    inputs.forEach(function (input, i) {
      const k = parseInt(input.value, 10);
      const text = data.labels[i][k];
      index = index * data.labels[i].length + k;
      const out = root.querySelector('output[for="' + input.id + '"]');
      if (out) out.textContent = text;
      if (input.type === "range") input.setAttribute("aria-valuetext", text);
      said.push(data.names[i] + " = " + text);
    });
    img.src = data.frames[data.order[index]];
    img.alt = data.title + ": " + said.join(", ");
  }

  inputs.forEach(function (input) {
    input.addEventListener("input", show);
    input.addEventListener("change", show);
  });
})();
