// Voice input (issue 7; ADR 0006): a [data-voice-input] button dictates into the [data-instruction] field of its
// form — the letter editor's instruction, the chat's question. Without JavaScript the button stays hidden. The
// live dictation client (public/live/dictation.js) is loaded on the button's first click and then drives it; a
// client that has not loaded after 120 s (SPEC §9) is reported, and the next click tries again.
(function () {
  var nonce = document.currentScript && document.currentScript.nonce;
  if (!window.Promise) return;
  document.querySelectorAll("[data-voice-input]").forEach(function (voice) {
    var form = voice.closest("form");
    if (!form || !form.querySelector("[data-instruction]")) return;
    var loading = null;
    voice.hidden = false;
    voice.addEventListener("click", function () {
      // Once loaded, dictation.js handles the clicks (it marks the button as its own).
      if (loading || voice.hasAttribute("data-live-ready")) return;
      var problem = form.querySelector("[data-dictation-error]");
      var script = document.createElement("script");
      var failed = function () {
        clearTimeout(timer);
        loading = null;
        script.remove();
        voice.removeAttribute("aria-busy");
        voice.removeAttribute("data-start-on-load");
        if (!problem) return;
        problem.textContent = voice.getAttribute("data-msg-load-failed");
        problem.hidden = false;
      };
      var timer = setTimeout(failed, 120000);
      loading = script;
      voice.setAttribute("aria-busy", "true");
      voice.setAttribute("data-start-on-load", "");
      if (problem) problem.hidden = true;
      script.src = "/live/dictation.js";
      script.nonce = nonce;
      script.onload = function () {
        clearTimeout(timer);
      };
      script.onerror = failed;
      document.head.appendChild(script);
    });
  });
})();
