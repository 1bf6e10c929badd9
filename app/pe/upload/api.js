// One request with SPEC §7's retries. Errors worth waiting out (no answer, 5xx, 429) are `transient`.
import { msg } from "./page.js";

export function failure(text, transient) {
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
export function api(path, payload) {
  return attempt(function () {
    var controller = new AbortController();
    var timer = setTimeout(function () {
      controller.abort();
    }, 60000);
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      // A refusal's detail in the page's language (web/api.server.ts detailLanguage); other clients get English.
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
export function put(url, blob, type, onProgress) {
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
