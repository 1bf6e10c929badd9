// Progressive enhancement of the letter screens (ADR 0006); they work without it. Copy buttons; Save only
// when a section differs from what was loaded (SPEC §5) and a warning before leaving unsaved text; the
// instruction counter, Update only with an instruction and busy once sent; saved prompts filled in place;
// and while a letter is processing, the lists refresh every 5 s (SPEC §4) and a busy editor reloads itself.
// The voice button is voice.js's.
(function () {
  document.querySelectorAll("[data-action=copy]").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (!source || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.value).then(function () {
        var label = button.textContent;
        button.textContent = button.getAttribute("data-copied-label");
        setTimeout(function () {
          button.textContent = label;
        }, 2000);
      });
    });
  });

  var form = document.querySelector("[data-letter-form]");
  var dirty = false;
  var leaving = false;
  if (form) {
    var save = form.querySelector("[data-action=save]");
    var check = function () {
      // A form re-rendered after a refused save starts with the doctor's unsaved text.
      dirty = form.hasAttribute("data-dirty");
      form.querySelectorAll("textarea").forEach(function (area) {
        if (area.value !== area.defaultValue) dirty = true;
      });
      if (save) save.disabled = !dirty;
    };
    form.addEventListener("input", check);
    form.addEventListener("submit", function () {
      leaving = true;
    });
    check();
    window.addEventListener("beforeunload", function (event) {
      if (dirty && !leaving) event.preventDefault();
    });
  }

  var refine = document.querySelector("[data-refine-form]");
  var query = refine && refine.querySelector("[data-instruction]");
  if (query) {
    var counter = refine.querySelector("[data-counter]");
    var update = refine.querySelector("[data-action=refine]");
    var busy = update.disabled;
    var count = function () {
      counter.textContent = query.value.length + "/" + query.maxLength;
      if (!busy) update.disabled = !query.value.trim();
    };
    query.addEventListener("input", count);
    count();
    refine.addEventListener("submit", function (event) {
      if (event.submitter !== update) return;
      // After the submission has read the button's intent: the model may take a while.
      setTimeout(function () {
        busy = update.disabled = true;
        update.setAttribute("aria-busy", "true");
      });
    });
    var dialog = refine.querySelector("[data-save-prompt]");
    if (dialog)
      dialog.addEventListener("toggle", function () {
        var text = dialog.querySelector("[data-prompt-text]");
        if (dialog.open && text && !text.value) text.value = query.value;
      });
    document.querySelectorAll("[data-action=use-prompt]").forEach(function (button) {
      button.addEventListener("click", function (event) {
        event.preventDefault();
        query.value = button.getAttribute("data-prompt");
        count();
        query.focus();
      });
    });
  }

  if (document.querySelector("[data-letter-busy]")) {
    setTimeout(function () {
      if (!(query && query.value)) window.location.reload();
    }, 5000);
  }

  function poll() {
    var modal = document.querySelector("[data-modal]");
    var waiting = [].some.call(document.querySelectorAll("[data-poll-list]"), function (list) {
      return list.querySelector("[data-processing]") && (!modal || modal.contains(list));
    });
    if (!waiting) return;
    setTimeout(function () {
      fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          return response.ok ? response.text() : Promise.reject(response.status);
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          doc.querySelectorAll("[data-poll-list]").forEach(function (fresh) {
            var name = fresh.getAttribute("data-poll-list");
            var current = document.querySelector('[data-poll-list="' + name + '"]');
            if (current) current.replaceWith(fresh);
          });
          // The sidebar's counts move with the lists (a finished letter adds one).
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
        .finally(poll);
    }, 5000);
  }
  poll();
})();
