(function () {
  var root = document.currentScript.parentNode;
  var data = JSON.parse(root.querySelector(".nl-player-data").textContent);
  var img = root.querySelector(".nl-player-frame");
  var inputs = root.querySelectorAll("[data-axis]");
  function show() {
    var index = 0, said = [];
    for (var i = 0; i < inputs.length; i++) {
      var k = parseInt(inputs[i].value, 10), text = data.labels[i][k];
      index = index * data.labels[i].length + k;
      var out = root.querySelector('output[for="' + inputs[i].id + '"]');
      if (out) { out.textContent = text; }
      if (inputs[i].type === "range") {
        inputs[i].setAttribute("aria-valuetext", text);
      }
      said.push(data.names[i] + " = " + text);
    }
    img.src = data.frames[data.order[index]];
    img.alt = data.title + ": " + said.join(", ");
  }
  for (var i = 0; i < inputs.length; i++) {
    inputs[i].addEventListener("input", show);
    inputs[i].addEventListener("change", show);
  }
})();
