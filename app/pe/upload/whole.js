// A file of up to 8 MiB: one presigned PUT straight to object storage, retried as a whole.
import { api, failure, put } from "./api.js";
import { msg, showProgress } from "./page.js";

export function uploadWhole(file, slot) {
  return api("/api/get-upload-url", slot).then(function (answer) {
    if (!answer || !answer.url || !answer.key) throw failure(msg("invalidResponse"));
    return put(answer.url, file, file.type, function (loaded) {
      showProgress(loaded, file.size);
    }).then(function () {
      return answer.key;
    });
  });
}
