// Display math wider than the page (a row of matrices on a phone) is scaled
// down to fit, to no less than 55%; below that it scrolls sideways.
(() => {
  const fit = () => {
    document.querySelectorAll("div.math mjx-container[display='true']")
      .forEach((box) => {
        box.style.fontSize = "";
        const room = box.parentElement.clientWidth;
        const need = box.scrollWidth;
        if (room > 0 && need > room)
          box.style.fontSize = `${Math.max(0.55, room / need) * 100}%`;
      });
  };
  const start = () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(fit);
      let timer;
      window.addEventListener("resize", () => {
        clearTimeout(timer);
        timer = setTimeout(fit, 100);
      });
    }
  };
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
