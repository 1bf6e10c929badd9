// The record tab of the Audio page (issue 7, ADR 0013). Without JavaScript it explains that live recording
// needs it and links to the upload form. With it: shows the widget and loads the live client
// (/live/recorder.js) with this page's nonce. A client that fails, or has not started within 120 s
// (SPEC §9 chunk loading time-out), is reported in the widget instead of leaving it loading for ever.
(function () {
  var root = document.querySelector("[data-live-recorder]");
  var nonce = document.currentScript && document.currentScript.nonce;
  if (!root) return;
  root.querySelector("[data-live-nojs]").hidden = true;
  root.querySelector("[data-live-widget]").hidden = false;
  root.setAttribute("data-state", "loading");

  function failed() {
    clearTimeout(timer);
    // The client started after all: it owns the widget now.
    if (root.getAttribute("data-state") !== "loading") return;
    root.setAttribute("data-state", "error");
    root.querySelector("[data-live-label]").textContent = root.getAttribute("data-msg-label-error");
    root.querySelector("[data-live-error-text]").textContent = root.getAttribute("data-msg-load-failed");
    root.querySelector("[data-live-error]").hidden = false;
    root.querySelector('[data-live-action="retry"]').onclick = function () {
      window.location.reload();
    };
  }
  var timer = setTimeout(failed, 120000);
  var script = document.createElement("script");
  script.src = "/live/recorder.js";
  script.nonce = nonce;
  script.onerror = failed;
  // Loaded but not started (an error while it set up): the same report, at once.
  script.onload = function () {
    setTimeout(failed);
  };
  document.head.appendChild(script);
})();
