// Display math wider than the page (a row of matrices on a phone) is scaled
// down to fit, to no less than half; below that it scrolls sideways.
(function () {
  "use strict";

  function fit() {
    for (const box of document.querySelectorAll(
      "div.math mjx-container[display='true']",
    )) {
      // MathJax sets its own size to match the text's x-height: keep it
      // as the base and only shrink from there.
      if (box.dataset.baseSize === undefined)
        box.dataset.baseSize = box.style.fontSize || "100%";
      const base = parseFloat(box.dataset.baseSize);
      box.style.fontSize = box.dataset.baseSize;
      const room = box.parentElement.clientWidth;
      const need = box.scrollWidth;
      if (room > 0 && need > room)
        box.style.fontSize = base * Math.max(0.5, room / need) + "%";
    }
  }

  function start() {
    if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return;
    MathJax.startup.promise.then(fit);
    let timer;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(fit, 100);
    });
  }

  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
