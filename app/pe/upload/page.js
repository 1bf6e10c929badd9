// The upload form and what the pieces of the upload script share: its elements, its messages (data-msg-*
// attributes the page renders in its language) and the error box above it.
export var form = document.querySelector("[data-upload-form]");
export var $ = function (selector) {
  return form.querySelector(selector);
};
export var msg = function (name, values) {
  var text = form.getAttribute("data-msg-" + name.toLowerCase()) || name;
  Object.keys(values || {}).forEach(function (k) {
    text = text.replace("{" + k + "}", values[k]);
  });
  return text;
};
export var el = function (tag, className, text) {
  var node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
};

export var fileInput, choice, progress, paused;
// Looked up once ../upload.js knows that the page has the form and the browser can run the script.
export function findElements() {
  fileInput = $('input[name="audio"]');
  choice = $("[data-template-choice]");
  progress = $("progress");
  paused = $("[data-upload-paused]");
}

export function showError(text) {
  var box = document.querySelector("[data-upload-error]");
  if (!box) {
    box = el("div", "mb-4 flex items-start justify-between gap-4 rounded-md border border-red-300 bg-red-50 px-4 py-3");
    box.setAttribute("data-upload-error", "");
    box.setAttribute("role", "alert");
    box.appendChild(el("p", "text-sm text-red-900"));
    var close = el("button", "text-sm text-red-900 underline", msg("dismiss"));
    close.type = "button";
    close.onclick = function () {
      box.remove();
    };
    box.appendChild(close);
    form.parentNode.insertBefore(box, form);
  }
  (box.querySelector("p") || box).textContent = text;
}
export function clearError() {
  var box = document.querySelector("[data-upload-error]");
  if (box) box.remove();
}
export function showProgress(sent, total) {
  progress.value = Math.round((sent / total) * 100);
}
