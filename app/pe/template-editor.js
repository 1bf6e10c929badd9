// Progressive enhancement for the template editor (ADR 0006); the server
// checks everything again. Live character counters (red above the warning
// mark), element names stripped of disallowed characters while typing with a
// short note, the unsaved-changes marker, and the "adding" label on submit.
(function () {
  var disallowed = /[^A-Za-zÄÖÜäöüß\- ]/g;

  function counterFor(input) {
    var label = input.closest("label");
    return label && label.querySelector("[data-counter]");
  }

  function updateCounter(input) {
    var counter = counterFor(input);
    if (!counter) return;
    var max = Number(counter.getAttribute("data-max"));
    var warn = Number(counter.getAttribute("data-warn-above"));
    var length = input.value.length;
    counter.textContent = length + "/" + max;
    counter.classList.toggle("text-red-700", length > warn);
    counter.classList.toggle("font-semibold", length > warn);
    counter.classList.toggle("text-slate-500", length <= warn);
  }

  function note(input, message) {
    var id = input.id + "-strip-note";
    var existing = document.getElementById(id);
    if (!message) {
      if (existing) existing.remove();
      return;
    }
    if (existing) return;
    var p = document.createElement("p");
    p.id = id;
    p.className = "mt-1 text-xs text-amber-700";
    p.setAttribute("role", "status");
    p.textContent = message;
    input.insertAdjacentElement("afterend", p);
  }

  document.addEventListener("input", function (event) {
    var input = event.target;
    var form = input.form;
    if (!form || !form.hasAttribute("data-structure-editor")) return;
    if (input.hasAttribute("data-element-name")) {
      var cleaned = input.value.replace(disallowed, "");
      if (cleaned !== input.value) {
        var position = input.selectionStart - (input.value.length - cleaned.length);
        input.value = cleaned;
        input.setSelectionRange(position, position);
        note(input, form.getAttribute("data-char-message"));
      } else {
        note(input, null);
      }
    }
    updateCounter(input);
    var card = form.closest("[data-template]");
    var marker = card && card.querySelector("[data-dirty-indicator]");
    if (marker) marker.hidden = false;
  });

  document.addEventListener("submit", function (event) {
    var button = event.submitter;
    var label = button && button.getAttribute("data-pending-label");
    if (!label) return;
    button.textContent = label;
    button.setAttribute("aria-busy", "true");
  });
})();
