// Progressive enhancement of the upload form (ADR 0006, ADR 0010). Without it the form uploads through the
// app. With it: a valid file opens the template dialog (templates of the chosen language, loading state,
// error with retry); the bytes go from the browser straight to object storage — in one PUT, or above
// 8 MiB in 5 MiB parts, each retried on its own, that resume from the parts the store already holds after
// the link drops or the page is reloaded. Every request follows SPEC §7's retries (3 retries after 1 s,
// 2 s, 4 s on network errors, time-outs, 5xx and 429; 60 s per attempt). The server checks everything again.
// The pieces live in ./upload/; scripts/build-pe.mjs bundles them into the one public/pe/upload.js the page loads.
// They are imported in the order the code ran as one file: esbuild lays them out so, which compresses best.
import { $, clearError, el, fileInput, findElements, form, msg, progress, showError } from "./upload/page.js";
import { loadTemplates } from "./upload/templates.js";
import { api, failure } from "./upload/api.js";
import { uploadWhole } from "./upload/whole.js";
import { abortUpload, uploadParts } from "./upload/parts.js";

var MAX = 73400320;
var PARTS_ABOVE = 8388608;
var TYPES = ["audio/mpeg", "audio/wav", "audio/x-wav"];

function mb(bytes) {
  return String(Math.ceil((bytes / 1048576) * 10) / 10).replace(/\.0$/, "") + " MB";
}
function problemWith(file) {
  if (file.type.indexOf("audio/") !== 0 || TYPES.indexOf(file.type) < 0)
    return msg("unsupported", { type: file.type || "unknown" });
  if (file.size === 0) return msg("empty");
  if (file.size > MAX) return msg("tooLarge", { size: mb(file.size), maxFileSize: mb(MAX) });
  return null;
}

function start() {
  var body = form && form.querySelector("[data-template-dialog-body]");
  if (!body || !window.fetch || !window.XMLHttpRequest || !window.FormData || !window.HTMLDialogElement) return;
  findElements();
  var dialog = el("dialog", "m-auto w-full max-w-2xl rounded-lg p-6 shadow-xl backdrop:bg-slate-900/40");
  dialog.setAttribute("data-template-dialog", "");
  dialog.setAttribute("aria-labelledby", "upload-dialog-title");
  body.parentNode.insertBefore(dialog, body);
  dialog.appendChild(body);
  form.querySelectorAll("[data-dialog-only]").forEach(function (node) {
    node.hidden = false;
  });

  // The drop zone hands a dropped file to the file input, so both ways end in the same "change".
  var zone = $("[data-drop-zone]");
  zone.addEventListener("dragover", function (event) {
    event.preventDefault();
    zone.classList.add("border-brand-600");
  });
  zone.addEventListener("dragleave", function () {
    zone.classList.remove("border-brand-600");
  });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("border-brand-600");
    if (!event.dataTransfer.files.length) return;
    fileInput.files = event.dataTransfer.files;
    fileInput.dispatchEvent(new Event("change", { bubbles: true }));
  });

  fileInput.addEventListener("change", function () {
    clearError();
    var file = fileInput.files[0];
    if (!file) return;
    var problem = problemWith(file);
    if (problem) {
      fileInput.value = "";
      return showError(problem);
    }
    dialog.showModal();
    loadTemplates();
  });
  $("[data-dialog-cancel]").addEventListener("click", function () {
    dialog.close();
  });
  dialog.addEventListener("close", function () {
    if (!form.hasAttribute("data-busy")) fileInput.value = "";
  });
  $("[data-upload-abort]").addEventListener("click", abortUpload);

  form.addEventListener("submit", function (event) {
    var file = fileInput.files[0];
    if (!file) return;
    // PDFs or a patient record as context: the app reads them on the way, so the form goes through it.
    var pdfs = $('input[name="contextPdf"]');
    var patient = $('input[name="patientId"]');
    if ((pdfs && pdfs.files.length) || (patient && patient.value.trim())) return;
    event.preventDefault();
    var problem = problemWith(file);
    if (problem) return showError(problem);
    var data = new FormData(form);
    var slot = {
      file_name: file.name,
      file_type: file.type,
      language_code: data.get("language"),
      additional_context: data.get("additionalContext") || undefined,
      // The patient's consent (issue 22), as the form without JavaScript sends it.
      consent: data.get("consentKind")
        ? { kind: data.get("consentKind"), given_by: data.get("consentGivenBy") || "patient" }
        : undefined,
    };
    form.setAttribute("data-busy", "");
    dialog.close();
    clearError();
    progress.hidden = false;
    fileInput.disabled = true;
    (file.size > PARTS_ABOVE ? uploadParts(file, slot) : uploadWhole(file, slot))
      .then(function (key) {
        return api("/api/update-file-metadata", {
          s3_key: key,
          metadata: { template_id: data.get("templateId"), transcription_mode: data.get("mode") },
        });
      })
      .then(function (answer) {
        if (!answer || !answer.success || !answer.key) throw failure(msg("invalidResponse"));
        // A real navigation, so the server's one-time message says it worked.
        var done = el("form");
        done.method = "post";
        done.action = "/?index"; // the Audio page is an index route
        [
          ["intent", "uploaded"],
          ["key", answer.key],
        ].forEach(function (pair) {
          var input = el("input");
          input.type = "hidden";
          input.name = pair[0];
          input.value = pair[1];
          done.appendChild(input);
        });
        document.body.appendChild(done);
        done.submit();
      })
      .catch(function (error) {
        showError(error && error.message ? error.message : msg("generic"));
        form.removeAttribute("data-busy");
        progress.hidden = true;
        fileInput.disabled = false;
        fileInput.value = "";
      });
  });
}

start();
