// Progressive enhancement for the Audio page (ADR 0006); the page works
// without it. Remembers whether the upload panel is open, and counts the
// additional-context characters (red above 9000).
(function () {
  var panel = document.querySelector("[data-audio-panel]");
  if (panel) {
    try {
      if (localStorage.getItem("skribent.audioPanel") === "closed") panel.open = false;
      panel.addEventListener("toggle", function () {
        localStorage.setItem("skribent.audioPanel", panel.open ? "open" : "closed");
      });
    } catch {
      /* storage blocked by policy: the panel simply stays open */
    }
  }
  document.addEventListener("input", function (event) {
    var input = event.target;
    if (input.name !== "additionalContext") return;
    var counter = input.closest("label").querySelector("[data-counter]");
    var max = Number(counter.getAttribute("data-max"));
    var warn = Number(counter.getAttribute("data-warn-above"));
    counter.textContent = input.value.length + "/" + max;
    counter.classList.toggle("text-red-700", input.value.length > warn);
  });
})();
