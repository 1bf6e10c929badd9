// Progressive enhancement of the upload form (ADR 0006): the file goes from the
// browser straight to object storage through a short-lived URL, with a progress
// bar and SPEC §7's retries (3 retries after 1 s, 2 s, 4 s on network errors,
// time-outs, 5xx and 429; 60 s per attempt). The server checks everything again;
// without this script the same form uploads through the app.
(function () {
  var form = document.querySelector("[data-upload-form]");
  if (!form || !window.fetch || !window.XMLHttpRequest || !window.FormData) return;
  var MAX = 73400320;
  var TYPES = ["audio/mpeg", "audio/wav", "audio/x-wav"];
  var msg = function (name, values) {
    var text = form.getAttribute("data-msg-" + name) || name;
    Object.keys(values || {}).forEach(function (k) {
      text = text.replace("{" + k + "}", values[k]);
    });
    return text;
  };
  var size = function (bytes) {
    var mb = Math.ceil((bytes / 1048576) * 10) / 10;
    return String(mb).replace(/\.0$/, "") + " MB";
  };
  var progress = form.querySelector("progress");
  var button = form.querySelector('button[type="submit"]');

  function showError(text) {
    var box = document.querySelector("[data-upload-error]");
    if (!box) {
      box = document.createElement("div");
      box.setAttribute("data-upload-error", "");
      box.setAttribute("role", "alert");
      box.className = "mb-4 rounded-md border border-red-300 bg-red-50 px-4 py-3 text-sm text-red-900";
      form.parentNode.insertBefore(box, form);
    }
    box.textContent = text;
  }

  function api(path, body) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().then(
        function (data) {
          if (!response.ok) throw new Error(data.detail || "API request failed: " + response.status);
          return data;
        },
        function () {
          throw new Error("API request failed: " + response.status);
        },
      );
    });
  }

  function put(url, file, attempt) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open("PUT", url);
      xhr.setRequestHeader("Content-Type", file.type || "audio/wav");
      xhr.timeout = 60000;
      xhr.upload.onprogress = function (e) {
        if (e.lengthComputable && progress) progress.value = Math.round((e.loaded / e.total) * 100);
      };
      var retry = function (error) {
        if (attempt >= 3) return reject(error);
        setTimeout(
          function () {
            put(url, file, attempt + 1).then(resolve, reject);
          },
          1000 * Math.pow(2, attempt),
        );
      };
      xhr.onload = function () {
        if (xhr.status >= 200 && xhr.status < 300) return resolve();
        var error = new Error(msg("status", { n: xhr.status }));
        if (xhr.status >= 500 || xhr.status === 429) retry(error);
        else reject(error);
      };
      xhr.onerror = function () {
        retry(new Error(msg("network")));
      };
      xhr.ontimeout = function () {
        retry(new Error(msg("timeout")));
      };
      xhr.send(file);
    });
  }

  form.addEventListener("submit", function (event) {
    var file = form.querySelector('input[name="audio"]').files[0];
    if (!file) return;
    // PDFs or a patient record as context: the app reads them on the way, so the form goes through it.
    var pdfs = form.querySelector('input[name="contextPdf"]');
    var patient = form.querySelector('input[name="patientId"]');
    if ((pdfs && pdfs.files.length) || (patient && patient.value.trim())) return;
    event.preventDefault();
    if (file.type.indexOf("audio/") !== 0 || TYPES.indexOf(file.type) < 0)
      return showError(msg("unsupported", { type: file.type || "unknown" }));
    if (file.size === 0) return showError(msg("empty"));
    if (file.size > MAX) return showError(msg("tooLarge", { size: size(file.size), maxFileSize: size(MAX) }));
    var data = new FormData(form);
    button.disabled = true;
    if (progress) progress.hidden = false;
    api("/api/get-upload-url", {
      file_name: file.name,
      file_type: file.type,
      language_code: data.get("language"),
      additional_context: data.get("additionalContext") || undefined,
    })
      .then(function (slot) {
        if (!slot || !slot.url || !slot.key) throw new Error(msg("invalidResponse"));
        return put(slot.url, file, 0).then(function () {
          return api("/api/update-file-metadata", {
            s3_key: slot.key,
            metadata: { template_id: data.get("templateId"), transcription_mode: data.get("mode") },
          });
        });
      })
      .then(function () {
        // A real navigation, so the server's one-time message says it worked.
        var done = document.createElement("form");
        done.method = "post";
        done.action = "/?index"; // the Audio page is an index route
        done.innerHTML = '<input type="hidden" name="intent" value="uploaded">';
        document.body.appendChild(done);
        done.submit();
      })
      .catch(function (error) {
        showError(error && error.message ? error.message : msg("generic"));
        button.disabled = false;
        if (progress) progress.hidden = true;
      });
  });
})();
