// Progressive enhancement of the chat screen (ADR 0006; it works without this). Send posts the question form to
// /resources/chat-stream and shows the answer as it is written (server-sent events; SPEC §4 "sending (thinking)"):
// the text is set with textContent only, never as HTML. Send needs a question and no answer in flight (SPEC §5),
// and waits while voice input fills the field. PDFs can be dropped on the PDF area. A page opened while an answer
// is being written reloads itself until it is there.
(function () {
  var root = document.querySelector("[data-chat]");
  var form = root && root.querySelector("[data-chat-form]");
  if (!form || !window.fetch || !window.TextDecoder || !window.ReadableStream) return;
  var field = form.querySelector("[data-instruction]");
  var send = form.querySelector("[data-chat-send]");
  var box = root.querySelector("[data-chat-messages]");
  var list = root.querySelector("[data-chat-list]");
  var problem = root.querySelector("[data-chat-error]");
  var busy = send.disabled;

  var update = function () {
    send.disabled = busy || !field.value.trim();
  };
  field.addEventListener("input", update);
  update();

  var report = function (text) {
    problem.textContent = text;
    problem.hidden = !text;
  };
  var scroll = function () {
    box.scrollTop = box.scrollHeight;
  };
  var add = function (role, text) {
    var item = root.querySelector('[data-chat-template="' + role + '"]').content.firstElementChild.cloneNode(true);
    var empty = root.querySelector("[data-chat-empty]");
    if (empty) empty.remove();
    if (text !== undefined) {
      item.setAttribute("data-status", "done");
      item.querySelector("[data-chat-text]").textContent = text;
    }
    list.appendChild(item);
    scroll();
    return item;
  };

  // The context area as the server now renders it (after the first answer, without the PDF input).
  var refreshContext = function () {
    fetch(window.location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-chat-context]");
        var current = form.querySelector("[data-chat-context]");
        if (!fresh || !current) return;
        current.replaceWith(fresh);
        bindDrop();
      })
      .catch(function () {});
  };

  var stream = function (response, answer) {
    var text = answer.querySelector("[data-chat-text]");
    var written = "";
    var reader = response.body.getReader();
    var decoder = new window.TextDecoder();
    var buffer = "";
    var handle = function (event) {
      var data = event.split(/\r?\n/).filter(function (line) {
        return line.indexOf("data:") === 0;
      });
      if (!data.length) return;
      var message = JSON.parse(
        data
          .map(function (line) {
            return line.slice(5);
          })
          .join("\n"),
      );
      if (message.type === "text") {
        written += message.text;
        text.textContent = written;
        scroll();
      } else if (message.type === "done" || message.type === "error") {
        text.textContent = message.type === "done" ? message.content : message.message;
        answer.setAttribute("data-status", message.type === "done" ? "done" : "failed");
        scroll();
      }
    };
    var pump = function () {
      return reader.read().then(function (chunk) {
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        var events = buffer.split(/\r?\n\r?\n/);
        buffer = events.pop();
        events.forEach(handle);
        return pump();
      });
    };
    return pump();
  };

  form.addEventListener("submit", function (event) {
    if (event.submitter !== send) return;
    event.preventDefault();
    // Voice input is still filling the field (it is disabled meanwhile), or an answer is on its way.
    if (busy || field.disabled || !field.value.trim()) return;
    var body = new FormData(form);
    body.set("intent", "send");
    busy = true;
    update();
    report("");
    add("user", field.value.trim());
    var answer = add("assistant");
    fetch("/resources/chat-stream", { method: "POST", body: body, credentials: "same-origin" })
      .then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (response.ok && type.indexOf("text/event-stream") === 0) {
          field.value = "";
          return stream(response, answer).then(function () {
            // The stream broke off: the answer is still written on the server, and the page shows it.
            if (answer.getAttribute("data-status") === "pending") window.location.reload();
            else refreshContext();
          });
        }
        // Refused before anything was asked (an answer in flight, not a PDF, …): the server says why.
        return response.json().then(function (refusal) {
          answer.previousElementSibling.remove();
          answer.remove();
          report(refusal.detail || root.getAttribute("data-apology"));
        });
      })
      .catch(function () {
        if (answer.getAttribute("data-status") !== "pending") return;
        answer.setAttribute("data-status", "failed");
        answer.querySelector("[data-chat-text]").textContent = root.getAttribute("data-apology");
      })
      .finally(function () {
        busy = false;
        update();
      });
  });

  // Dropped files go into the PDF input (bound again when the context area is replaced).
  var bindDrop = function () {
    var drop = form.querySelector("[data-chat-drop]");
    if (!drop || !window.DataTransfer) return;
    var input = drop.querySelector("input[type=file]");
    drop.addEventListener("dragover", function (event) {
      event.preventDefault();
    });
    drop.addEventListener("drop", function (event) {
      event.preventDefault();
      input.files = event.dataTransfer.files;
    });
  };
  bindDrop();

  if (list.querySelector('[data-status="pending"]')) {
    window.setInterval(function () {
      if (!busy && !field.value) window.location.reload();
    }, 3000);
  }
  scroll();
})();
