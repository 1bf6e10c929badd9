import { HttpError, request, uploadAudioCopy, type LiveConsent, type SavePayload, type Saved } from "./api";
import type { RecordedAudio } from "./capture";

// The recording widget's save options: the additional-context counter, templates of the chosen language,
// and saving (SPEC §3 payload, then the compressed copy with SPEC §7's retries).

type Msg = (key: string, values?: Record<string, string | number>) => string;

/** SPEC §9: 10000 characters, the counter red above 9000 (the limits come from the server's markup). */
export function watchContextCounter(root: HTMLElement) {
  const area = root.querySelector<HTMLTextAreaElement>("textarea[name=additional_context]");
  const counter = area?.closest("label")?.querySelector<HTMLElement>("[data-counter]");
  if (!area || !counter) return;
  const max = Number(counter.getAttribute("data-max"));
  const warn = Number(counter.getAttribute("data-warn-above"));
  area.addEventListener("input", () => {
    counter.textContent = `${area.value.length}/${max}`;
    counter.classList.toggle("text-red-700", area.value.length > warn);
  });
}

/**
 * A destructive button: the first click shows its `data-msg-confirm` text, a second one within `ms` acts; after
 * that the button reads as before.
 */
export function onConfirmedClick(target: HTMLButtonElement, act: () => void, ms = 5_000) {
  const label = target.textContent ?? "";
  let confirmUntil = 0;
  target.addEventListener("click", () => {
    if (Date.now() > confirmUntil) {
      confirmUntil = Date.now() + ms;
      target.textContent = target.getAttribute("data-msg-confirm") ?? label;
      setTimeout(() => (target.textContent = label), ms);
      return;
    }
    confirmUntil = 0;
    target.textContent = label;
    act();
  });
}

/** Templates depend on the language (SPEC §7 mapping): choosing another one loads its list. */
export function watchTemplateLanguage(root: HTMLElement, language: HTMLSelectElement, msg: Msg) {
  const select = root.querySelector<HTMLSelectElement>("select[name=template_id]");
  if (!select) return;
  language.addEventListener("change", async () => {
    const templateLanguage = language.value === "en" ? "en-GB" : "de-DE";
    try {
      const body = (await request(`/api/structure/templates?language=${templateLanguage}`)) as {
        templates?: Array<{ id: string; name: string; isSystem?: boolean }>;
      };
      const templates = body.templates ?? [];
      if (!templates.length) return;
      const chosen = select.value;
      select.replaceChildren();
      for (const system of [true, false]) {
        const list = templates.filter((t) => Boolean(t.isSystem) === system);
        if (!list.length) continue;
        const group = document.createElement("optgroup");
        group.label = msg(system ? "systemTemplates" : "customTemplates");
        // Custom template names come from users: text, never markup.
        for (const t of list) group.appendChild(new Option(t.name, t.id, false, t.id === chosen));
        select.appendChild(group);
      }
    } catch {
      /* the list of the page's language stays; the server checks the choice again */
    }
  });
}

/** The patient's consent as the recorder's fields say (issue 22); undefined: not documented. */
export function consentOf(root: HTMLElement): LiveConsent | undefined {
  const kind = root.querySelector<HTMLSelectElement>("select[name=consentKind]")?.value;
  const givenBy = root.querySelector<HTMLSelectElement>("select[name=consentGivenBy]")?.value;
  return kind ? { kind, given_by: givenBy || "patient" } : undefined;
}

/** Whether the recorder may start: a consent the operator requires (CONSENT_REQUIRED) is chosen. */
export function consentMissing(root: HTMLElement) {
  const select = root.querySelector<HTMLSelectElement>("select[name=consentKind]");
  return Boolean(select?.required && !select.value);
}

export function savePayload(root: HTMLElement, copy: RecordedAudio | null): SavePayload {
  const field = (selector: string) => root.querySelector<HTMLInputElement>(selector);
  const context = field("textarea[name=additional_context]")?.value.trim() ?? "";
  const mode = field("[name=transcription_mode]:checked")?.value ?? field("[name=transcription_mode]")?.value;
  return {
    template_id: field("select[name=template_id]")?.value ?? "",
    transcription_mode: mode === "transcript" ? "transcript" : "transcript_and_letter",
    ...(context ? { additional_context: context } : {}),
    ...(copy ? { original_mime_type: copy.mimeType } : {}),
    audio_copy: copy !== null,
    ...(consentOf(root) ? { consent: consentOf(root) } : {}),
  };
}

/**
 * Saves the session with `save` — relayed, the server builds transcript and audio from what it received;
 * direct, the page sends its finals. Then the page's copy (only a whole one) becomes the audio file — if that
 * upload fails the transcript stays saved and only a warning is logged (SPEC §8). On success the page moves to
 * the audio list; otherwise returns the message.
 */
export async function saveRecording(
  root: HTMLElement,
  save: (payload: SavePayload) => Promise<Saved>,
  copy: RecordedAudio | null,
  msg: Msg,
) {
  const usable = copy && copy.blob.size > 0 ? copy : null;
  if (copy && !usable) console.warn(msg("blobEmpty"));
  let saved;
  try {
    saved = await save(savePayload(root, usable));
  } catch (error) {
    const detail = error instanceof HttpError ? error.detail : "";
    return detail ? `${msg("saveFailed")}: ${detail}` : msg("saveFailed");
  }
  if (usable) {
    try {
      await uploadAudioCopy(saved.audio_key, usable.blob, usable.mimeType, usable.extension);
    } catch (error) {
      console.warn("Live recording: the audio copy was not uploaded; the transcript is saved.", error);
    }
  }
  location.assign(`/?saved=${encodeURIComponent(saved.recording_key ?? "")}`);
  return null;
}
