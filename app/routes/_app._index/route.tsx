import { json, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Dismissible } from "~/components/shell/dismissible";
import type { RouteHandle } from "~/components/page-scripts";
import { SectionHeader } from "~/components/ui/section";
import { formatDate, formatDateTime, toTemplateLanguage } from "~/i18n";
import { consentSummary } from "~/services/recordings/consent.server";
import { findRecordingByKey } from "~/models/recording.server";
import { findNumberedRecording, pageOfReadyRecordings } from "~/models/recording-list.server";
import { listFailedJobReasons } from "~/models/transcription.server";
import { auditRecording } from "~/services/audit/events.server";
import { loadPage, withPage } from "~/services/web/pagination";
import { getConfig } from "~/services/config/config.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { findResumableLiveSession } from "~/services/live/sessions.server";
import { modelNotice, waitingLabels } from "~/services/model-store/model-notice.server";
import { getPlaybackUrl } from "~/services/recordings/playback.server";
import { audioDeletionDate } from "~/services/recordings/removal.server";
import { requireUser } from "~/services/web/session.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { listUserTemplates } from "~/services/templates/templates.server";
import { meterCall, type SpecEndpoint } from "~/services/admin/usage.server";
import {
  afterUpload,
  deleteIntent,
  renameIntent,
  resetIntent,
  tagIntent,
  transcribeIntent,
  uploadIntent,
  parseAudioAction,
} from "./actions.server";
import { DeleteDialog, EditDialog, PlayerDialog, WithdrawConsentDialog } from "./dialogs";
import { RecordingList } from "./recording-list";
import type { LiveResume } from "./record-panel";
import { UploadPanel } from "./upload-panel";
import { INTENT, type AudioIntent } from "./intents";
import { notFound } from "~/services/web/not-found.server";

// SPEC §2 "Audio section": the upload panel and the recordings list. Dialogs
// (play, rename and tags, delete) are query parameters rendered by the server,
// so everything works without JavaScript.

export const handle: RouteHandle = {
  i18n: ["common", "recordings", "transcriptions", "live"],
  scripts: ["shell", "audio", "upload", "record"],
};

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const url = new URL(request.url);
  const t = await getFixedTFor(language, ["common", "recordings", "transcriptions"]);
  const templateLanguage = toTemplateLanguage(language);
  const tab = url.searchParams.get("tab") === "record" ? ("record" as const) : ("upload" as const);
  const dialogKey =
    url.searchParams.get("play") ??
    url.searchParams.get("edit") ??
    url.searchParams.get("delete") ??
    url.searchParams.get("withdraw");
  const [page, dialogRow, templates, live] = await Promise.all([
    loadPage(url, (at) => pageOfReadyRecordings({ ownerId: user.id, ...at })),
    dialogKey ? findNumberedRecording({ ownerId: user.id, key: dialogKey }) : undefined,
    listUserTemplates({ userId: user.id, language: templateLanguage }),
    tab === "record" ? findResumableLiveSession(user.id) : null,
  ]);
  if (dialogKey && !dialogRow) notFound();
  // Only what the widget shows of an unfinished live session (SPEC §4: offered to continue or save).
  const resume: LiveResume | null = live
    ? {
        id: live.id,
        seconds: live.seconds,
        transcript: live.transcript.map((s) => ({ speaker: s.speaker, text: s.text })),
        transcribeLater: live.transcribeLater,
      }
    : null;
  // Why the shown failed transcriptions failed (the rest of the list is not read at all).
  const failures = await listFailedJobReasons({
    ownerId: user.id,
    recordingIds: [...page.rows, ...(dialogRow ? [dialogRow] : [])]
      .filter((r) => r.transcription_status === "failed")
      .map((r) => r.id),
  });
  // Recordings whose job waits for a model that is still downloading say so, with the percentage (issue 21).
  const waiting = waitingLabels(t);
  const view = (r: Omit<(typeof page.rows)[number], "total">) => ({
    key: r.storage_key,
    consent: consentSummary(t, r, (date) => formatDateTime(date, language)),
    name: r.display_name ?? t("audio.recordingNumber", { n: r.number }),
    displayName: r.display_name,
    fileName: r.original_filename,
    createdAt: r.created_at.toISOString(),
    status: r.transcription_status,
    tags: r.tags,
    canReset: !r.audio_deleted_at && (Boolean(r.transcript_key) || r.medical_letter_status !== "pending"),
    canTranscribe: !r.audio_deleted_at && (r.transcription_status === "pending" || r.transcription_status === "failed"),
    audioDeleted: Boolean(r.audio_deleted_at),
    // Its letter is released: the sweep deletes the audio then (issue 22).
    audioDeletedOn: (() => {
      const on = r.letter_released_at && !r.audio_deleted_at ? audioDeletionDate(r.letter_released_at) : null;
      return on ? t("audio.audioDeletedOn", { date: formatDate(on, language) }) : null;
    })(),
    failure: r.transcription_status === "failed" ? t(failures.get(r.id) ?? "transcriptions:errors.failed") : null,
    waiting:
      r.transcription_status === "processing"
        ? waiting.speech
        : r.transcription_status === "completed" && r.medical_letter_status === "processing"
          ? waiting.letter
          : null,
    // The letter's SPEC §4 status once there is a transcript to write it from (made on the server, ADR 0012).
    letterStatus:
      r.transcription_status === "completed" &&
      (r.transcription_mode === "transcript_and_letter" || r.medical_letter_status !== "pending")
        ? r.medical_letter_status
        : null,
  });
  const shown = page.rows.map(view);
  const { pagination } = page;
  const selected = dialogRow ? view(dialogRow) : undefined;
  await auditRecording(request, user.id, "recording.list");
  if (url.searchParams.has("play")) await auditRecording(request, user.id, "recording.play", dialogKey!);
  const dialog = url.searchParams.has("play")
    ? ({ kind: "play", playbackUrl: await getPlaybackUrl({ userId: user.id, key: dialogKey! }) } as const)
    : url.searchParams.has("edit")
      ? ({ kind: "edit" } as const)
      : url.searchParams.has("delete")
        ? ({ kind: "delete" } as const)
        : url.searchParams.has("withdraw")
          ? ({ kind: "withdraw" } as const)
          : null;
  return {
    // The player dialog is the page's island (ADR 0006): only then does it hydrate.
    island: dialog?.kind === "play",
    title: `${t("audio.title")} · Skribent`,
    language,
    tab,
    resume,
    liveMode: getConfig().speech.live.mode,
    patientRecords: !getConfig().flags.disableMfiles,
    autoStart: getConfig().flags.autoStartTranscription,
    consentRequired: getConfig().consentRequired,
    models: modelNotice(t, language),
    recordings: shown,
    pagination,
    selected: selected ?? null,
    dialog,
    templates: {
      language: templateLanguage,
      system: templates.system.map((tpl) => ({ id: tpl.id, name: tpl.name })),
      custom: templates.custom.map((tpl) => ({ id: tpl.id, name: tpl.name })),
    },
  };
}

/** The SPEC §7 call each intent does: one usage row per form post, as the JSON door counts its calls. */
const intentCalls = new Map<AudioIntent, SpecEndpoint>([
  [INTENT.rename, "rename-file"],
  [INTENT.addTag, "update-file-tags"],
  [INTENT.removeTag, "update-file-tags"],
  [INTENT.transcribe, "transcribe_v2"],
  [INTENT.delete, "delete-all"],
  [INTENT.withdrawConsent, "delete-all"],
  [INTENT.reset, "force-cleanup"],
]);

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  try {
    if ((request.headers.get("Content-Type") ?? "").startsWith("multipart/form-data")) {
      meterCall(user.id, "get-upload-url");
      return await uploadIntent(user, request);
    }
    const submission = await parseAudioAction(request);
    if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
    const form = submission.value;
    meterCall(user.id, intentCalls.get(form.intent) ?? null);
    switch (form.intent) {
      case INTENT.rename:
      case INTENT.addTag:
      case INTENT.removeTag: {
        const recording = await findRecordingByKey({ ownerId: user.id, key: form.key });
        if (!recording) throw new DomainError("not_found", "recordings:errors.recordingNotFound");
        if (form.intent === INTENT.rename) return await renameIntent(user, form, request, recording.display_name);
        return await tagIntent(user, form, request, recording.tags);
      }
      case INTENT.uploaded: {
        // The browser upload (progress, retries) finished through the API: say so once, and start
        // transcription when configured — for a recording this user owns and that passed its checks.
        const recording = await findRecordingByKey({ ownerId: user.id, key: form.key });
        // Not this user's recording (issue 9): a 404 like every other intent, not a success message.
        if (!recording) throw new DomainError("not_found", "recordings:errors.recordingNotFound");
        if (recording.upload_status !== "ready")
          return redirectWithToast("/", { type: "success", key: "recordings:audio.uploaded" });
        return await afterUpload(user, recording.storage_key, request);
      }
      case INTENT.transcribe:
        return await transcribeIntent(user, form.key, request);
      case INTENT.delete:
        return await deleteIntent(user, form.key, request);
      case INTENT.withdrawConsent:
        return await deleteIntent(user, form.key, request, true);
      case INTENT.reset:
        return await resetIntent(user, form.key, request);
    }
  } catch (error) {
    if (error instanceof DomainError && error.kind === "not_found") notFound();
    throw error;
  }
}

export default function AudioSection() {
  const data = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const { t } = useTranslation("recordings");
  const error = actionData && "error" in actionData ? actionData.error : null;
  const editError = actionData && "dialog" in actionData ? error : null;
  const back = withPage("/", data.pagination.page);
  return (
    <>
      <SectionHeader title={t("common:audio.title")} intro={t("common:audio.intro")} />
      {error && !editError ? (
        <div className="mb-4" data-upload-error>
          <Dismissible tone="error" role="alert" dismissLabel={t("common:toast.dismiss")}>
            {error}
          </Dismissible>
        </div>
      ) : null}
      {data.models ? (
        <div
          className={`mb-4 rounded-md border px-4 py-3 text-sm ${
            data.models.tone === "error"
              ? "border-red-200 bg-red-50 text-red-800"
              : "border-brand-200 bg-brand-50 text-brand-900"
          }`}
          role="status"
          data-model-notice={data.models.tone}
        >
          <p className="font-medium">{data.models.text}</p>
          {data.models.hint ? <p className="mt-1">{data.models.hint}</p> : null}
        </div>
      ) : null}
      <UploadPanel
        tab={data.tab}
        language={data.language}
        templates={data.templates}
        patientRecords={data.patientRecords}
        resume={data.resume}
        liveMode={data.liveMode}
        autoStart={data.autoStart}
        consentRequired={data.consentRequired}
      />
      <RecordingList recordings={data.recordings} pagination={data.pagination} language={data.language} />
      {data.selected && data.dialog?.kind === "play" ? (
        <PlayerDialog recording={data.selected} playbackUrl={data.dialog.playbackUrl} back={back} />
      ) : null}
      {data.selected && data.dialog?.kind === "edit" ? (
        <EditDialog recording={data.selected} error={editError} back={back} />
      ) : null}
      {data.selected && data.dialog?.kind === "delete" ? <DeleteDialog recording={data.selected} back={back} /> : null}
      {data.selected && data.dialog?.kind === "withdraw" ? (
        <WithdrawConsentDialog recording={data.selected} back={back} />
      ) : null}
    </>
  );
}
