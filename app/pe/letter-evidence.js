// Progressive enhancement of the structured letter editor (issue 24; ADR 0006): the caret in a sentence shows that
// sentence's evidence below its section — its status, where the transcript says it (a link to that paragraph) and
// the audio from that second. The page carries the stored sentences (sentence-evidence.server.ts); a sentence is
// found in the text as it stands now, so its evidence survives the doctor's edits of other sentences, and a
// sentence the doctor rewrote is said to be theirs, its evidence dropped — visibly. Without JavaScript the check
// (?check=1) shows the same for every sentence.
import { clock } from "../components/ui/clock";

(function () {
  var panel = document.querySelector("[data-sentence-panel]");
  var form = panel && panel.closest("[data-letter-form]");
  if (!form) return;
  var data;
  try {
    data = JSON.parse(panel.getAttribute("data-evidence"));
  } catch {
    return;
  }
  var areas = Array.prototype.slice.call(form.querySelectorAll("textarea[data-section]"));
  var status = panel.querySelector("[data-panel-status]");
  var list = panel.querySelector("[data-panel-sources]");
  var audio = panel.querySelector("[data-panel-audio]");
  var shown = null;

  function label(name, values) {
    return panel.getAttribute("data-label-" + name).replace(/\{\{(\w+)\}\}/g, function (_, key) {
      return values[key];
    });
  }

  /** The stored sentences of a section where they stand in its text now, in order; a rewritten one is not found. */
  function locate(text, sentences) {
    var found = [];
    var from = 0;
    sentences.forEach(function (sentence) {
      var at = text.indexOf(sentence.text, from);
      if (at < 0) return;
      found.push({ start: at, end: at + sentence.text.length, sentence: sentence });
      from = at + sentence.text.length;
    });
    return found;
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function source(id) {
    var segment = data.segments[id];
    var item = el("li", "rounded border border-slate-200 bg-white px-2 py-1");
    item.setAttribute("data-panel-source", id);
    var link = el(
      "a",
      "font-medium text-brand-700 hover:underline",
      label("source", {
        speaker: segment[0],
        time: clock(segment[1]),
      }),
    );
    link.href = data.transcriptPath + "#seg-" + id;
    link.title = label("open", {});
    item.appendChild(link);
    item.appendChild(el("p", "mt-0.5 line-clamp-2 text-slate-800", segment[2]));
    if (data.audioUrl) {
      var play = el(
        "button",
        "mt-1 rounded px-1.5 py-0.5 text-brand-700 hover:bg-brand-50",
        label("listen", {
          time: clock(segment[1]),
        }),
      );
      play.type = "button";
      play.setAttribute("data-action", "play-source");
      play.addEventListener("click", function () {
        audio.src = data.audioUrl + "#t=" + segment[1];
        audio.hidden = false;
        audio.play().catch(function () {
          /* the player stays there to start by hand */
        });
      });
      item.appendChild(play);
    }
    return item;
  }

  function hide() {
    panel.hidden = true;
    shown = null;
  }

  function show(area, key, state, sources) {
    var section = area.parentElement;
    if (panel.previousElementSibling !== section) section.insertAdjacentElement("afterend", panel);
    panel.hidden = false;
    if (shown === key) return;
    shown = key;
    status.setAttribute("data-status", state);
    status.textContent = label(state, {});
    list.textContent = "";
    audio.hidden = true;
    audio.removeAttribute("src");
    if (state === "supported" || state === "unsupported") {
      if (sources.length === 0) list.appendChild(el("li", "text-slate-600", label("none", {})));
      sources.forEach(function (id) {
        if (data.segments[id]) list.appendChild(source(id));
      });
    }
  }

  function update(area) {
    var index = areas.indexOf(area);
    var text = area.value;
    var caret = area.selectionStart;
    var hit = locate(text, data.sections[index] || []).filter(function (f) {
      return f.start <= caret && caret <= f.end;
    })[0];
    if (hit) {
      if (hit.sentence.status === "neutral") return hide();
      return show(area, index + ":" + hit.start + ":" + hit.sentence.text, hit.sentence.status, hit.sentence.sources);
    }
    // Between sentences, or in text the doctor wrote or changed since it was saved.
    if (!text.slice(Math.max(0, caret - 1), caret + 1).trim() || text === area.defaultValue) return hide();
    show(area, "changed", "changed", []);
  }

  ["focusin", "click", "keyup", "input"].forEach(function (type) {
    form.addEventListener(type, function (event) {
      if (areas.indexOf(event.target) >= 0) update(event.target);
    });
  });
})();
