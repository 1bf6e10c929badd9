// Progressive enhancement of the transcript viewer (ADR 0006); the viewer works without it. Copy puts
// the plain transcript on the clipboard; the confidence toggle switches the highlights in place and is
// remembered in this browser (SPEC §3 "transcript highlight preference").
(function () {
  var viewer = document.querySelector("[data-transcript-viewer]");
  if (!viewer) return;
  var KEY = "skribent.transcriptHighlight";
  var toggle = viewer.querySelector("[data-highlight-toggle]");
  function show(on) {
    viewer.setAttribute("data-highlight", on ? "on" : "off");
    toggle.textContent = toggle.getAttribute(on ? "data-label-off" : "data-label-on");
  }
  // The server drew the highlights (no "?highlight=off"): the switch can work without a reload. The review of
  // uncertain words (?review=n) has no switch.
  if (toggle && viewer.getAttribute("data-highlight") === "on") {
    try {
      if (localStorage.getItem(KEY) === "off") show(false);
    } catch {
      /* storage blocked by policy: highlights stay on */
    }
    toggle.addEventListener("click", function (event) {
      event.preventDefault();
      var on = viewer.getAttribute("data-highlight") !== "on";
      show(on);
      try {
        localStorage.setItem(KEY, on ? "on" : "off");
      } catch {
        /* not remembered, nothing else lost */
      }
    });
  }
  var copy = viewer.querySelector("[data-copy]");
  var source = viewer.querySelector("[data-copy-source]");
  if (copy && source && navigator.clipboard) {
    copy.hidden = false;
    copy.addEventListener("click", function () {
      navigator.clipboard.writeText(source.value).then(function () {
        var label = copy.textContent;
        copy.textContent = copy.getAttribute("data-copied-label");
        setTimeout(function () {
          copy.textContent = label;
        }, 2000);
      });
    });
  }
})();
