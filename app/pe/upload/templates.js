// The dialog's template choice: the templates of the chosen language, loaded when a file is chosen, with a
// loading state and an error to retry from.
import { $, choice, el, msg } from "./page.js";

export function loadTemplates() {
  var language = $('select[name="language"]').value;
  var checked = $('input[name="templateId"]:checked');
  var selected = checked ? checked.value : null;
  choice.setAttribute("aria-busy", "true");
  choice.replaceChildren(el("p", "text-slate-500", msg("loadingTemplates")));
  fetch("/api/structure/templates?language=" + encodeURIComponent(language), {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  })
    .then(function (response) {
      if (!response.ok) throw new Error(String(response.status));
      return response.json();
    })
    .then(function (data) {
      renderTemplates(data.templates || [], selected);
    })
    .catch(function () {
      var retry = el("button", "ml-2 underline", msg("retry"));
      retry.type = "button";
      retry.onclick = loadTemplates;
      var box = el("p", "text-red-800", msg("templatesFailed"));
      box.setAttribute("role", "alert");
      box.appendChild(retry);
      choice.replaceChildren(box);
    })
    .finally(function () {
      choice.removeAttribute("aria-busy");
    });
}

// Names come from users (custom templates): text nodes only, never markup.
function renderTemplates(templates, selected) {
  var groups = [
    ["system", templates.filter((t) => t.isSystem)],
    ["custom", templates.filter((t) => !t.isSystem)],
  ].filter((group) => group[1].length);
  choice.className = "mt-1 grid gap-4" + (groups.length > 1 ? " md:grid-cols-2" : "");
  choice.replaceChildren();
  groups.forEach(function (group) {
    var column = el("div");
    column.appendChild(el("p", "mb-1 text-xs tracking-wide text-slate-500 uppercase", msg(group[0])));
    group[1].forEach(function (template) {
      var label = el("label", "flex items-center gap-2");
      var radio = el("input");
      radio.type = "radio";
      radio.name = "templateId";
      radio.value = template.id;
      radio.checked = template.id === selected;
      label.append(radio, document.createTextNode(template.name));
      column.appendChild(label);
    });
    choice.appendChild(column);
  });
  var first = $('input[name="templateId"]');
  if (first && !$('input[name="templateId"]:checked')) first.checked = true;
}
