// A file above 8 MiB, in 5 MiB parts (ADR 0010), each retried on its own. The upload's key is remembered for this
// very file, so choosing it again after a reload resumes from the parts the store already holds.
// The file name may name a patient: only a hash of it is kept (ARCHITECTURE.md, browser storage).
import { api, failure, put } from "./api.js";
import { $, fileInput, form, msg, paused, showProgress } from "./page.js";

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
export function uploadParts(file, slot) {
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
// Abort (offered while paused): the store drops the parts it holds and the file's key is forgotten; the page starts over.
export function abortUpload() {
  var key = form.getAttribute("data-upload-key");
  var file = fileInput.files[0];
  if (file) memory(file).set(null);
  var leave = function () {
    window.location.reload();
  };
  if (key) api("/api/upload-parts/abort", { key: key }).then(leave, leave);
  else leave();
}
