import type { TFunction } from "i18next";
import type { Language } from "~/i18n";
import { LETTER_ROLES, modelStatus, SPEECH_ROLES, waitingForModels } from "./downloads.server";
import { formatBytes, formatSeconds } from "./progress-line";

// What a clinician sees of the model download (issue 21): a banner on the workspace while a model is coming or
// cannot be had ("Sprachmodell wird geladen – 43 %"), and on each recording that waits for it. Translated here, so
// the page only renders text.

export type ModelNotice = { tone: "info" | "error"; text: string; hint?: string };

function timeOf(date: Date, language: Language) {
  return new Intl.DateTimeFormat(language === "de" ? "de-DE" : "en-GB", {
    timeZone: "Europe/Berlin",
    timeStyle: "short",
  }).format(date);
}

/** The workspace banner, or null when every model the engines need is ready (or none is needed). */
export function modelNotice(t: TFunction, language: Language): ModelNotice | null {
  const overview = modelStatus();
  const problem = overview.problem;
  if (problem) {
    const file = overview.files.find((f) => f.name === problem.name);
    const comingAgain = file && file.state !== "failed" && file.state !== "missing";
    if (comingAgain)
      return {
        tone: "error",
        text: t("recordings:models.retrying", {
          name: file.label,
          reason: problem.error,
          // While an attempt runs there is no next one yet: it is trying now.
          time: timeOf(problem.nextAttemptAt ?? new Date(), language),
        }),
        hint: t("recordings:models.loadingHint"),
      };
    if (file)
      return { tone: "error", text: t("recordings:models.unavailable", { name: file.label, reason: problem.error }) };
  }
  const speech = waitingForModels(SPEECH_ROLES);
  if (speech)
    return {
      tone: "info",
      text: t("recordings:models.loadingSpeech", { percent: speech.percent }),
      hint: t("recordings:models.loadingHint"),
    };
  const letter = waitingForModels(LETTER_ROLES);
  if (letter)
    return {
      tone: "info",
      text: t("recordings:models.loadingLetter", { percent: letter.percent }),
      hint: t("recordings:models.loadingHint"),
    };
  return null;
}

/** What a recording in processing shows while its job waits for a model (null: it does not wait). */
export function waitingLabels(t: TFunction) {
  const speech = waitingForModels(SPEECH_ROLES);
  const letter = waitingForModels(LETTER_ROLES);
  return {
    speech: speech ? t("recordings:models.waitingSpeech", { percent: speech.percent }) : null,
    letter: letter ? t("recordings:models.waitingLetter", { percent: letter.percent }) : null,
  };
}

/** The admin health page's tile (issue 21): each model file's state, with size, speed and time left. */
export function modelsTile(t: TFunction, language: Language) {
  const { files } = modelStatus();
  const status = files.some((f) => f.state === "retrying" || f.state === "failed")
    ? ("error" as const)
    : files.some((f) => f.state === "missing")
      ? ("not_configured" as const)
      : files.some((f) => f.state !== "ready")
        ? ("downloading" as const)
        : ("healthy" as const);
  const lines = files.map((f) => {
    const percent = f.size ? Math.floor((Math.min(f.bytes, f.size) / f.size) * 100) : 0;
    return t(`admin:health.models.${f.state}`, {
      label: `${f.label} (${f.name})`,
      percent,
      done: formatBytes(f.bytes),
      total: f.size ? formatBytes(f.size) : "?",
      speed: formatBytes(f.bytesPerSecond),
      left: f.secondsLeft !== undefined ? formatSeconds(f.secondsLeft) : "?",
      error: f.error ?? "",
      time: f.nextAttemptAt ? timeOf(f.nextAttemptAt, language) : "",
    });
  });
  return {
    name: "models" as const,
    status,
    detail: lines.length ? lines.join("\n") : t("admin:health.models.none"),
    latencyMs: null,
  };
}
