import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { formatDateTime, type Language } from "~/i18n";
import { findLetterOfRecording } from "~/models/letter.server";
import { findRecordingByKey } from "~/models/recording.server";
import { findTranscriptByKey } from "~/models/transcript.server";
import { auditTranscript } from "~/services/audit/events.server";
import { getDb } from "~/models/db.server";
import { hideAsNotFound, notFound } from "~/services/web/not-found.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";
import { meterCall } from "~/services/admin/usage.server";
import type { TranscriptWord } from "~/services/speech/transcript-format";
import { redirectWithToast } from "~/services/web/toast.server";
import { isUnknownIntent } from "~/components/forms/fields";
import { deleteTranscript } from "~/services/transcription/transcripts.server";
import { transcriptReview } from "~/services/transcription/corrections.server";
import { getPlaybackUrl } from "~/services/recordings/playback.server";
import { LetterStatusLabel } from "./_app.arztbriefe.$/letter-status";
import {
  canCreateLetter,
  createLetterIntent,
  letterFailures,
  letterStatusOf,
} from "./_app.arztbriefe.$/letter-state.server";
import { editorUrl } from "./_app.arztbriefe.$/paths";
import { INTENT, transcriptViewerActionSchema } from "./_app.transcriptions/schema";
import { segmentAnchor } from "~/services/transcription/segments";
import { correctionAction, type CorrectionActionData } from "./_app.transcriptions/corrections-action.server";
import { reviewPosition, reviewView, speakerViews, turnViews } from "./_app.transcriptions/corrections-view.server";
import { ReviewPanel } from "./_app.transcriptions/review-panel";
import { MergeSpeakersForm, MoveSegmentForm, NameSpeakerForm } from "./_app.transcriptions/speaker-forms";

// SPEC §2 transcript viewer: a server-rendered modal over the list. Speaker cards, text per speaker in
// six colours, confidence highlights with a legend (on by default; `?highlight=off`, remembered by
// transcript.js), copy, delete, and "Create document" or a link to the letter. Every word is rendered as
// text: nothing spoken becomes markup. Issue 24: the corrected version is shown (`?version=recognised` shows what the
// engine recognised), speakers can be named, merged and given a paragraph, and `?review=<n>` steps through the
// uncertain words (_app.transcriptions/review-panel.tsx).

const SPEAKER_COLOURS = [
  "border-sky-500 bg-sky-50",
  "border-emerald-500 bg-emerald-50",
  "border-amber-500 bg-amber-50",
  "border-violet-500 bg-violet-50",
  "border-rose-500 bg-rose-50",
  "border-teal-500 bg-teal-50",
];

/** A malformed key is hidden like a missing one. */
function hideTranscript(error: unknown): never {
  return hideAsNotFound(error, { kinds: ["invalid"] });
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const current = await transcriptReview({ userId: user.id, key: params["*"] ?? "" }).catch(hideTranscript);
  const { row, version, items } = current;
  await auditTranscript(request, user.id, "transcript.read", row.storage_key);
  const url = new URL(request.url);
  const showRecognised = url.searchParams.get("version") === "recognised" && version > 1;
  const document = showRecognised ? current.recognised : current.document;
  const t = await getFixedTFor(language, ["transcriptions"]);
  const speakers = speakerViews(document, t);
  const position = showRecognised ? null : reviewPosition(url.searchParams.get("review"), items.length);
  let review = null;
  if (position !== null) {
    await auditTranscript(request, user.id, "transcript.review.read", row.storage_key);
    const audio = await getPlaybackUrl({ userId: user.id, key: row.source_key }).catch(() => null);
    review = reviewView(items, position, audio, t);
  }
  const recording = await findRecordingByKey({ ownerId: user.id, key: row.source_key });
  const letterStatus = recording?.medical_letter_status ?? "pending";
  const [failures, letter] = await Promise.all([
    letterFailures(user.id, recording ? [recording] : []),
    findLetterOfRecording(getDb(), { ownerId: user.id, recordingId: row.recording_id }),
  ]);
  return {
    language,
    letter: letterStatusOf({ id: recording?.id ?? "", medical_letter_status: letterStatus }, failures),
    letterKey: letter?.storage_key ?? null,
    canCreateLetter: canCreateLetter(letterStatus),
    key: row.storage_key,
    name: row.display_name ?? row.original_filename,
    createdAt: document.created_at,
    speakers: speakers.map((s) => ({ ...s, ...document.speakers_info[s.speaker]! })),
    turns: turnViews(document, speakers),
    version,
    showRecognised,
    reviewCount: items.length,
    review,
    wordCount: document.word_count,
    plainText: document.formatted_transcript,
    highlight: url.searchParams.get("highlight") !== "off",
    confirmDelete: url.searchParams.has("delete"),
  };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const submission = parseWithZod(await request.formData(), { schema: transcriptViewerActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const key = `transcripts/${params["*"] ?? ""}`;
  const form = submission.value;
  if (form.intent !== INTENT.createLetter && form.intent !== INTENT.delete)
    return correctionAction(form, user, key, request);
  if (form.intent === INTENT.createLetter) {
    // The recording is the one behind this transcript, never a key from the form.
    const row = await findTranscriptByKey({ ownerId: user.id, key });
    if (!row) notFound();
    return createLetterIntent({ user, sourceKey: row.source_key, request, redirectTo: new URL(request.url).pathname });
  }
  meterCall(user.id, "delete-transcript");
  await deleteTranscript({ userId: user.id, transcriptKey: key }).catch(hideTranscript);
  await auditTranscript(request, user.id, "transcript.delete", key);
  return redirectWithToast("/transcriptions", { type: "success", key: "transcriptions:toast.deleted" });
}

function clock(seconds: number) {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}

function Word({ word, first }: { word: TranscriptWord; first: boolean }) {
  const space = word.punctuation || first ? "" : " ";
  // A word the doctor confirmed or corrected is no longer uncertain.
  if (word.confidence_level === "high" || word.punctuation || word.reviewed) return <>{space + word.text}</>;
  return (
    <>
      {space}
      <mark className={`confidence-${word.confidence_level}`} data-confidence={word.confidence_level}>
        {word.text}
      </mark>
    </>
  );
}

export default function TranscriptViewer() {
  const data = useLoaderData<typeof loader>();
  const actionData = useActionData<CorrectionActionData>();
  const { t } = useTranslation("transcriptions");
  const { pathname } = useLocation();
  const toggleTo = data.highlight ? `${pathname}?highlight=off` : pathname;
  const failure = actionData && "correction" in actionData ? actionData.correction : null;
  const editable = !data.showRecognised;
  return (
    <Modal title={t("viewer.title", { name: data.name })} closeTo="/transcriptions" closeLabel={t("viewer.close")} wide>
      {/* Nothing is typed here: while the letter is being created the viewer refreshes itself. */}
      {/* Not while reviewing: a refresh would take what is being typed. */}
      {data.letter.processing && !data.review ? (
        <noscript>
          <meta httpEquiv="refresh" content="5" />
        </noscript>
      ) : null}
      <div data-transcript-viewer data-highlight={data.highlight ? "on" : "off"}>
        <p className="mb-4 text-sm text-slate-600">
          {t("viewer.created", { date: formatDateTime(data.createdAt, data.language as Language) })} ·{" "}
          {t("viewer.words", { count: data.wordCount })}
        </p>

        {data.review ? (
          <ReviewPanel
            review={data.review}
            pathname={pathname}
            version={data.version}
            failure={failure?.intent === INTENT.correctWord || failure?.intent === INTENT.confirmWord ? failure : null}
          />
        ) : (
          <>
            {data.confirmDelete ? (
              <div className="mb-4 rounded-md border border-red-300 bg-red-50 p-4" role="alert" data-confirm-delete>
                <p className="font-medium text-red-900">{t("viewer.deleteTitle")}</p>
                <p className="mt-1 text-sm text-red-900">{t("viewer.deleteBody")}</p>
                <div className="mt-3 flex gap-2">
                  <Form method="post">
                    <input type="hidden" name="intent" value={INTENT.delete} />
                    <button type="submit" className="rounded-md bg-red-700 px-4 py-2 text-sm font-medium text-white">
                      {t("viewer.deleteConfirm")}
                    </button>
                  </Form>
                  <Link to={pathname} className={quiet}>
                    {t("viewer.cancel")}
                  </Link>
                </div>
              </div>
            ) : null}

            <div className="mb-4 flex flex-wrap items-center gap-2">
              <button type="button" className={button} hidden data-copy data-copied-label={t("viewer.copied")}>
                {t("viewer.copy")}
              </button>
              <Link
                to={toggleTo}
                className={quiet}
                data-highlight-toggle
                data-label-on={t("viewer.highlightsOn")}
                data-label-off={t("viewer.highlightsOff")}
              >
                {data.highlight ? t("viewer.highlightsOff") : t("viewer.highlightsOn")}
              </Link>
              {data.confirmDelete ? null : (
                <Link to={`${pathname}?delete=1`} className={`${quiet} text-red-700`} data-action="delete">
                  {t("list.delete")}
                </Link>
              )}
              {editable && data.reviewCount > 0 ? (
                <Link to={`${pathname}?review=1`} className={quiet} data-action="review">
                  {t("corrections.review.start", { count: data.reviewCount })}
                </Link>
              ) : null}
            </div>

            {data.version > 1 ? (
              <p
                className="mb-4 text-sm text-slate-600"
                data-transcript-version={data.showRecognised ? 1 : data.version}
              >
                {data.showRecognised
                  ? t("corrections.version.recognised")
                  : t("corrections.version.corrected", { version: data.version })}{" "}
                <Link
                  to={data.showRecognised ? pathname : `${pathname}?version=recognised`}
                  className="underline"
                  data-action="toggle-version"
                >
                  {data.showRecognised ? t("corrections.version.showCurrent") : t("corrections.version.showRecognised")}
                </Link>
              </p>
            ) : null}

            {failure && failure.intent !== INTENT.correctWord && failure.intent !== INTENT.confirmWord ? (
              <p
                className="mb-4 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-900"
                role="alert"
                data-error
              >
                {failure.error}
              </p>
            ) : null}

            {/* The letter of this recording: its status, and "Create document" or the way to it. letter.js refreshes
            this block while the letter is being created. */}
            <div
              className="mb-4 flex flex-wrap items-center gap-3 rounded-md border border-slate-200 bg-slate-50 p-3 text-sm"
              data-viewer-letter
              data-poll-list="viewer-letter"
            >
              <span className="text-slate-600">{t("letters:transcriptions.letterStatus")}</span>
              <LetterStatusLabel view={data.letter} />
              {data.letterKey ? (
                <Link to={editorUrl(data.letterKey)} className={quiet} data-action="open-letter">
                  {t("letters:transcriptions.openLetter")}
                </Link>
              ) : (
                <Form method="post" action={pathname}>
                  <input type="hidden" name="intent" value={INTENT.createLetter} />
                  <button
                    type="submit"
                    className={`${quiet} disabled:cursor-not-allowed disabled:opacity-50`}
                    disabled={!data.canCreateLetter}
                    title={data.canCreateLetter ? undefined : t("letters:transcriptions.createDisabled")}
                    data-action="create-letter"
                  >
                    {t("letters:transcriptions.createDocument")}
                  </button>
                </Form>
              )}
            </div>

            <p className="mb-4 flex flex-wrap items-center gap-3 text-xs text-slate-600" data-legend>
              <span>{t("viewer.legend")}</span>
              <mark className="confidence-low">{t("viewer.legendLow")}</mark>
              <mark className="confidence-medium">{t("viewer.legendMedium")}</mark>
              <span>{t("viewer.legendHigh")}</span>
            </p>

            <h3 className="mb-2 text-sm font-medium text-slate-700">{t("viewer.speakers")}</h3>
            <ul className="mb-6 grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
              {data.speakers.map((s) => (
                <li
                  key={s.speaker}
                  className={`rounded-md border-l-4 p-3 text-sm ${SPEAKER_COLOURS[(s.number - 1) % SPEAKER_COLOURS.length]}`}
                  data-speaker-card={s.number}
                >
                  <p className="font-medium" data-speaker-label>
                    {s.label}
                  </p>
                  <p className="text-xs text-slate-600">
                    {t("viewer.segments", { count: s.total_segments })} ·{" "}
                    {t("viewer.duration", { duration: clock(s.total_duration) })} ·{" "}
                    {t("viewer.firstAppearance", { time: clock(s.first_appearance) })}
                  </p>
                  {editable ? <NameSpeakerForm speaker={s} version={data.version} /> : null}
                </li>
              ))}
            </ul>
            {editable ? <MergeSpeakersForm speakers={data.speakers} version={data.version} /> : null}

            <div className="space-y-4" data-transcript-text>
              {data.turns.map((turn, i) => (
                <section
                  key={i}
                  className={`rounded-md border-l-4 px-4 py-3 ${SPEAKER_COLOURS[(turn.number - 1) % SPEAKER_COLOURS.length]}`}
                  data-turn={turn.number}
                >
                  <h4 className="mb-1 text-xs font-semibold tracking-wide text-slate-600 uppercase">
                    {turn.label} · {clock(turn.start)}
                  </h4>
                  {turn.paragraphs.map((paragraph) => (
                    <div key={paragraph.id} className="mb-2 last:mb-0">
                      <p
                        id={segmentAnchor(paragraph.id)}
                        className="scroll-mt-4 leading-relaxed target:bg-amber-50 target:ring-2 target:ring-amber-300"
                      >
                        {paragraph.words.map((word, k) =>
                          data.highlight ? (
                            <Word key={k} word={word} first={k === 0} />
                          ) : (
                            (word.punctuation || k === 0 ? "" : " ") + word.text
                          ),
                        )}
                      </p>
                      {editable ? (
                        <MoveSegmentForm
                          segment={paragraph.id}
                          speaker={turn.speaker}
                          speakers={data.speakers}
                          version={data.version}
                        />
                      ) : null}
                    </div>
                  ))}
                </section>
              ))}
            </div>

            {/* The plain text for copying: the copy button's source, and selectable without JavaScript. */}
            <details className="mt-6 text-sm">
              <summary className="cursor-pointer text-slate-600">{t("viewer.copyHint")}</summary>
              <textarea
                readOnly
                rows={8}
                className="mt-2 w-full rounded border border-slate-300 p-2 font-mono text-xs"
                data-copy-source
                defaultValue={data.plainText}
              />
            </details>
          </>
        )}
      </div>
    </Modal>
  );
}
