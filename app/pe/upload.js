// Progressive enhancement of the upload form (ADR 0006, ADR 0010). Without it the form uploads through the
// app. With it: a valid file opens the template dialog (templates of the chosen language, loading state,
// error with retry); the bytes go from the browser straight to object storage — in one PUT, or above
// 8 MiB in 5 MiB parts, each retried on its own, that resume from the parts the store already holds after
// the link drops or the page is reloaded. Every request follows SPEC §7's retries (3 retries after 1 s,
// 2 s, 4 s on network errors, time-outs, 5xx and 429; 60 s per attempt). The server checks everything again.
(function () {
  var form = document.querySelector("[data-upload-form]");
  var body = form && form.querySelector("[data-template-dialog-body]");
  if (!body || !window.fetch || !window.XMLHttpRequest || !window.FormData || !window.HTMLDialogElement) return;
  var MAX = 73400320;
  var PARTS_ABOVE = 8388608;
  var TYPES = ["audio/mpeg", "audio/wav", "audio/x-wav"];
  var $ = function (selector) {
    return form.querySelector(selector);
  };
  var msg = function (name, values) {
    var text = form.getAttribute("data-msg-" + name.toLowerCase()) || name;
    Object.keys(values || {}).forEach(function (k) {
      text = text.replace("{" + k + "}", values[k]);
    });
    return text;
  };
  var mb = function (bytes) {
    return String(Math.ceil((bytes / 1048576) * 10) / 10).replace(/\.0$/, "") + " MB";
  };
  var el = function (tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text) node.textContent = text;
    return node;
  };
  var fileInput = $('input[name="audio"]');
  var choice = $("[data-template-choice]");
  var progress = $("progress");
  var paused = $("[data-upload-paused]");

  var dialog = el("dialog", "m-auto w-full max-w-2xl rounded-lg p-6 shadow-xl backdrop:bg-slate-900/40");
  dialog.setAttribute("data-template-dialog", "");
  dialog.setAttribute("aria-labelledby", "upload-dialog-title");
  body.parentNode.insertBefore(dialog, body);
  dialog.appendChild(body);
  form.querySelectorAll("[data-dialog-only]").forEach(function (node) {
    node.hidden = false;
  });

  function showError(text) {
    var box = document.querySelector("[data-upload-error]");
    if (!box) {
      box = el(
        "div",
        "mb-4 flex items-start justify-between gap-4 rounded-md border border-red-300 bg-red-50 px-4 py-3",
      );
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
  function clearError() {
    var box = document.querySelector("[data-upload-error]");
    if (box) box.remove();
  }
  function problemWith(file) {
    if (file.type.indexOf("audio/") !== 0 || TYPES.indexOf(file.type) < 0)
      return msg("unsupported", { type: file.type || "unknown" });
    if (file.size === 0) return msg("empty");
    if (file.size > MAX) return msg("tooLarge", { size: mb(file.size), maxFileSize: mb(MAX) });
    return null;
  }

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

  function loadTemplates() {
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

  // One request with SPEC §7's retries. Errors worth waiting out (no answer, 5xx, 429) are `transient`.
  function failure(text, transient) {
    var error = new Error(text);
    error.transient = transient;
    return error;
  }
  function attempt(run) {
    var tries = 0;
    return new Promise(function (resolve, reject) {
      (function go() {
        run().then(resolve, function (error) {
          if (!error.transient || tries >= 3) return reject(error);
          setTimeout(go, 1000 * Math.pow(2, tries++));
        });
      })();
    });
  }
  function api(path, payload) {
    return attempt(function () {
      var controller = new AbortController();
      var timer = setTimeout(function () {
        controller.abort();
      }, 60000);
      return fetch(path, {
        method: "POST",
        credentials: "same-origin",
        // A refusal's detail in the page's language (api.server.ts detailLanguage); other clients get English.
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "X-Skribent-Language": document.documentElement.lang || "de",
        },
        body: JSON.stringify(payload),
        signal: controller.signal,
      })
        .finally(function () {
          clearTimeout(timer);
        })
        .then(
          function (response) {
            return response.json().then(
              function (data) {
                if (response.ok) return data;
                throw failure(
                  data.detail || msg("status", { n: response.status }),
                  response.status >= 500 || response.status === 429,
                );
              },
              function () {
                throw failure(msg("status", { n: response.status }), response.status >= 500 || response.status === 429);
              },
            );
          },
          function () {
            throw failure(msg("network"), true);
          },
        );
    });
  }
  function put(url, blob, type, onProgress) {
    return attempt(function () {
      return new Promise(function (resolve, reject) {
        var xhr = new XMLHttpRequest();
        xhr.open("PUT", url);
        if (type) xhr.setRequestHeader("Content-Type", type);
        xhr.timeout = 60000;
        xhr.upload.onprogress = function (event) {
          onProgress(event.loaded);
        };
        xhr.onload = function () {
          if (xhr.status >= 200 && xhr.status < 300) return resolve();
          onProgress(0);
          reject(failure(msg("status", { n: xhr.status }), xhr.status >= 500 || xhr.status === 429));
        };
        xhr.onerror = function () {
          onProgress(0);
          reject(failure(msg("network"), true));
        };
        xhr.ontimeout = function () {
          onProgress(0);
          reject(failure(msg("timeout"), true));
        };
        xhr.send(blob);
      });
    });
  }
  function showProgress(sent, total) {
    progress.value = Math.round((sent / total) * 100);
  }

  function uploadWhole(file, slot) {
    return api("/api/get-upload-url", slot).then(function (answer) {
      if (!answer || !answer.url || !answer.key) throw failure(msg("invalidResponse"));
      return put(answer.url, file, file.type, function (loaded) {
        showProgress(loaded, file.size);
      }).then(function () {
        return answer.key;
      });
    });
  }

  // Parts. The upload's key is remembered for this very file, so choosing it again after a reload resumes.
  // The file name may name a patient: only a hash of it is kept (ARCHITECTURE.md, browser storage).
  function hash(text) {
    var h = 2166136261;
    for (var i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return (h >>> 0).toString(36);
  }
  function memory(file) {
    var name = "skribent.upload." + hash([file.name, file.size, file.lastModified].join("|"));
    return {
      get: function () {
        try {
          return localStorage.getItem(name);
        } catch {
          return null;
        }
      },
      set: function (value) {
        try {
          if (value) localStorage.setItem(name, value);
          else localStorage.removeItem(name);
        } catch {
          /* storage blocked by policy: no resume after a reload, nothing else lost */
        }
      },
    };
  }
  function uploadParts(file, slot) {
    var remembered = memory(file);
    var key = remembered.get();
    var resumed = key
      ? api("/api/upload-parts/status", { key: key }).then(
          function (status) {
            return { key: key, size: status.part_size, count: status.part_count, held: status.parts };
          },
          function () {
            return null;
          },
        )
      : Promise.resolve(null);
    return resumed
      .then(function (upload) {
        if (upload) return upload;
        slot.file_size = file.size;
        return api("/api/upload-parts/start", slot).then(function (answer) {
          if (!answer || !answer.key || !answer.part_size || !answer.part_count) throw failure(msg("invalidResponse"));
          remembered.set(answer.key);
          return { key: answer.key, size: answer.part_size, count: answer.part_count, held: [] };
        });
      })
      .then(function (upload) {
        return sendParts(file, upload);
      })
      .then(function (uploadKey) {
        remembered.set(null);
        return uploadKey;
      });
  }
  function sendParts(file, upload) {
    var done = {};
    var sent = 0;
    upload.held.forEach(function (part) {
      done[part.part_number] = true;
      sent += part.size;
    });
    form.setAttribute("data-upload-key", upload.key);
    function next() {
      var todo = [];
      for (var n = 1; n <= upload.count; n++) if (!done[n]) todo.push(n);
      if (!todo.length) {
        return api("/api/upload-parts/complete", { key: upload.key }).then(function (answer) {
          if (!answer || !answer.success) throw failure(msg("invalidResponse"));
          return upload.key;
        });
      }
      // A few URLs at a time: they stay fresh even when each part takes a minute.
      return api("/api/upload-parts/urls", { key: upload.key, part_numbers: todo.slice(0, 3) })
        .then(function (answer) {
          return (answer.parts || []).reduce(function (chain, part) {
            return chain.then(function () {
              var start = (part.part_number - 1) * upload.size;
              var blob = file.slice(start, Math.min(start + upload.size, file.size));
              return put(part.url, blob, null, function (loaded) {
                showProgress(sent + loaded, file.size);
              }).then(function () {
                done[part.part_number] = true;
                sent += blob.size;
              });
            });
          }, Promise.resolve());
        })
        .then(next);
    }
    return next().catch(function (error) {
      if (!error.transient) throw error;
      return waitForLink(Object.keys(done).length, upload.count).then(function () {
        return api("/api/upload-parts/status", { key: upload.key }).then(function (status) {
          upload.held = status.parts;
          return sendParts(file, upload);
        });
      });
    });
  }
  // The link is down: say so, try again every 5 s (or on "online", or when asked), for up to 10 minutes.
  function waitForLink(doneParts, total) {
    paused.hidden = false;
    paused.querySelector("[data-upload-status]").textContent = msg("paused", { done: doneParts, total: total });
    return new Promise(function (resolve, reject) {
      var polls = 0;
      var timer;
      function stop(then) {
        clearTimeout(timer);
        window.removeEventListener("online", probe);
        $("[data-upload-resume]").onclick = null;
        paused.hidden = true;
        then();
      }
      function probe() {
        clearTimeout(timer);
        fetch("/resources/healthz", { cache: "no-store" }).then(function (response) {
          if (response.ok) stop(resolve);
          else again();
        }, again);
      }
      function again() {
        if (++polls > 120) return stop(reject.bind(null, failure(msg("network"))));
        timer = setTimeout(probe, 5000);
      }
      window.addEventListener("online", probe);
      $("[data-upload-resume]").onclick = probe;
      again();
    });
  }
  $("[data-upload-abort]").addEventListener("click", function () {
    var key = form.getAttribute("data-upload-key");
    var file = fileInput.files[0];
    if (file) memory(file).set(null);
    var leave = function () {
      window.location.reload();
    };
    if (key) api("/api/upload-parts/abort", { key: key }).then(leave, leave);
    else leave();
  });

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
})();
