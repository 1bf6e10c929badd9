// Progressive enhancement for the Audio page (ADR 0006); the page works
// without it. Remembers whether the upload panel is open, counts the
// additional-context characters (red above 9000), and while a recording is
// processing refreshes the list every 5 s (SPEC §4) without reloading the page.
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

  function refreshList() {
    var list = document.querySelector("[data-recordings]");
    if (!list || !list.querySelector("[data-processing]")) return;
    setTimeout(function () {
      // Not while the user is in a dialog or an upload: try again at the next tick.
      var busy = document.querySelector("dialog[open], [data-modal], [data-upload-form][data-busy]");
      if (busy) return refreshList();
      fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          return response.ok ? response.text() : Promise.reject(response.status);
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.querySelector("[data-recordings]");
          var current = document.querySelector("[data-recordings]");
          if (fresh && current) current.replaceWith(fresh);
          // The sidebar's counts move with the list (a finished transcript adds one).
          var counts = doc.querySelectorAll("[data-count]");
          document.querySelectorAll("[data-count]").forEach(function (mine, i) {
            if (counts[i] && counts[i].getAttribute("data-count") === mine.getAttribute("data-count")) {
              mine.replaceWith(counts[i]);
            }
          });
        })
        .catch(function () {
          /* offline for a moment: the next tick tries again */
        })
        .finally(refreshList);
    }, 5000);
  }
  refreshList();
})();
