import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Modal } from "~/components/ui/modal";
import { formatDateTime, type Language } from "~/i18n";
import { ADDITIONAL_CONTEXT_MAX, ADDITIONAL_CONTEXT_WARN_ABOVE, MAX_TAGS, TAG_MAX } from "~/models/recording-rules";

export type RecordingView = {
  key: string;
  name: string;
  fileName: string;
  createdAt: string;
  status: string;
  tags: string[];
  canReset: boolean;
};

type TemplateChoice = { id: string; name: string };

const button = "rounded-md bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700";
const quiet = "rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-50";

/** SPEC §2 upload panel: collapsible, two tabs; the upload is a plain multipart form. */
export function UploadPanel({
  tab,
  language,
  templates,
}: {
  tab: "record" | "upload";
  language: Language;
  templates: { system: TemplateChoice[]; custom: TemplateChoice[] };
}) {
  const { t } = useTranslation("recordings");
  const tabClass = (active: boolean) =>
    `rounded-t-md px-4 py-2 text-sm font-medium ${active ? "bg-white text-brand-700" : "text-slate-600 hover:text-slate-900"}`;
  return (
    <details open className="mb-8 rounded-lg border border-slate-200 bg-slate-100" data-audio-panel>
      <summary className="cursor-pointer px-4 py-3 font-medium">{t("audio.panel")}</summary>
      <nav className="flex gap-1 px-3" aria-label={t("audio.panel")}>
        <Link
          to="/?tab=record"
          className={tabClass(tab === "record")}
          aria-current={tab === "record" ? "page" : undefined}
        >
          {t("audio.tabRecord")}
        </Link>
        <Link to="/" className={tabClass(tab === "upload")} aria-current={tab === "upload" ? "page" : undefined}>
          {t("audio.tabUpload")}
        </Link>
      </nav>
      <div className="rounded-b-lg bg-white p-4">
        {tab === "record" ? (
          <p className="text-sm text-slate-700" data-record-later>
            {t("audio.recordLater")}
          </p>
        ) : (
          <Form method="post" encType="multipart/form-data" className="space-y-4" data-upload-form>
            <label className="block text-sm font-medium text-slate-700">
              {t("audio.file")}
              <input
                type="file"
                name="audio"
                required
                accept=".mp3,.wav,audio/mpeg,audio/wav,audio/x-wav"
                className="mt-1 block w-full rounded-md border-2 border-dashed border-slate-300 p-4 text-sm"
              />
            </label>
            <div className="grid gap-4 md:grid-cols-2">
              <label className="block text-sm font-medium text-slate-700">
                {t("audio.language")}
                <select
                  name="language"
                  defaultValue={language === "en" ? "en-GB" : "de-DE"}
                  className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5"
                >
                  <option value="de-DE">{t("audio.languageDe")}</option>
                  <option value="en-GB">{t("audio.languageEn")}</option>
                </select>
              </label>
              <fieldset className="text-sm">
                <legend className="font-medium text-slate-700">{t("audio.mode")}</legend>
                <label className="mt-1 flex items-center gap-2">
                  <input type="radio" name="mode" value="transcript_and_letter" defaultChecked />{" "}
                  {t("audio.modeLetter")}
                </label>
                <label className="flex items-center gap-2">
                  <input type="radio" name="mode" value="transcript" /> {t("audio.modeTranscript")}
                </label>
              </fieldset>
            </div>
            <fieldset className="text-sm">
              <legend className="font-medium text-slate-700">{t("audio.template")}</legend>
              <div className={`mt-1 grid gap-4 ${templates.custom.length ? "md:grid-cols-2" : ""}`}>
                {(
                  [
                    ["system", templates.system],
                    ["custom", templates.custom],
                  ] as const
                )
                  .filter(([, list]) => list.length > 0)
                  .map(([kind, list]) => (
                    <div key={kind}>
                      <p className="mb-1 text-xs tracking-wide text-slate-500 uppercase">
                        {kind === "system" ? t("audio.systemTemplates") : t("audio.customTemplates")}
                      </p>
                      {list.map((tpl, i) => (
                        <label key={tpl.id} className="flex items-center gap-2">
                          <input
                            type="radio"
                            name="templateId"
                            value={tpl.id}
                            defaultChecked={kind === "system" && i === 0}
                          />
                          {tpl.name}
                        </label>
                      ))}
                    </div>
                  ))}
              </div>
            </fieldset>
            <details className="text-sm">
              <summary className="cursor-pointer font-medium text-slate-700">{t("audio.context")}</summary>
              <label className="mt-2 block">
                <span className="flex justify-between text-xs text-slate-500">
                  {t("audio.contextHelp")}
                  <span data-counter data-max={ADDITIONAL_CONTEXT_MAX} data-warn-above={ADDITIONAL_CONTEXT_WARN_ABOVE}>
                    0/{ADDITIONAL_CONTEXT_MAX}
                  </span>
                </span>
                <textarea
                  name="additionalContext"
                  rows={4}
                  className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5"
                />
              </label>
            </details>
            <button type="submit" className={button}>
              {t("audio.submit")}
            </button>
            <p className="text-xs text-slate-500">{t("audio.pendingNote")}</p>
          </Form>
        )}
      </div>
    </details>
  );
}

function Actions({ recording }: { recording: RecordingView }) {
  const { t } = useTranslation("recordings");
  const q = encodeURIComponent(recording.key);
  return (
    <div className="flex flex-wrap gap-2">
      <Link to={`/?play=${q}`} className={`${quiet} hidden md:inline-block`} data-action="play">
        {t("audio.play")}
      </Link>
      <Link to={`/?edit=${q}`} className={quiet} data-action="edit">
        {t("audio.edit")}
      </Link>
      <Link to={`/?delete=${q}`} className={`${quiet} text-red-700`} data-action="delete">
        {t("audio.delete")}
      </Link>
    </div>
  );
}

/** SPEC §2 recordings list: table on desktop, cards on the phone. */
export function RecordingList({ recordings, language }: { recordings: RecordingView[]; language: Language }) {
  const { t } = useTranslation("recordings");
  return (
    <section aria-labelledby="recordings-title">
      <div className="mb-3 flex items-center justify-between">
        <h2 id="recordings-title" className="text-lg font-medium">
          {t("common:audio.listTitle")}
        </h2>
        <Link to="/" className={quiet} data-action="refresh">
          {t("audio.refresh")}
        </Link>
      </div>
      {recordings.length === 0 ? (
        <p
          className="rounded-lg border border-slate-200 bg-white px-4 py-10 text-center text-sm text-slate-500"
          data-empty
        >
          {t("common:audio.empty")}
        </p>
      ) : (
        <>
          <table className="hidden w-full overflow-hidden rounded-lg border border-slate-200 bg-white text-left text-sm md:table">
            <thead className="bg-slate-50 text-xs tracking-wide text-slate-500 uppercase">
              <tr>
                <th className="px-4 py-3">{t("common:audio.columnFile")}</th>
                <th className="px-4 py-3">{t("common:audio.columnDate")}</th>
                <th className="px-4 py-3">{t("common:audio.columnStatus")}</th>
                <th className="px-4 py-3">{t("audio.columnActions")}</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {recordings.map((r) => (
                <tr key={r.key} data-recording={r.key}>
                  <td className="px-4 py-3">
                    <span className="font-medium" data-recording-name>
                      {r.name}
                    </span>
                    <span className="block text-xs text-slate-500">{r.fileName}</span>
                    <Tags tags={r.tags} />
                  </td>
                  <td className="px-4 py-3">{formatDateTime(r.createdAt, language)}</td>
                  <td className="px-4 py-3">{t(`common:status.transcription.${r.status}`)}</td>
                  <td className="px-4 py-3">
                    <Actions recording={r} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ul className="space-y-3 md:hidden" data-recording-cards>
            {recordings.map((r) => (
              <li key={r.key} className="rounded-lg border border-slate-200 bg-white p-4" data-recording-card={r.key}>
                <p className="font-medium">{r.name}</p>
                <p className="text-xs text-slate-500">
                  {formatDateTime(r.createdAt, language)} · {t(`common:status.transcription.${r.status}`)}
                </p>
                <Tags tags={r.tags} />
                <div className="mt-3">
                  <Actions recording={r} />
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function Tags({ tags }: { tags: string[] }) {
  if (tags.length === 0) return null;
  return (
    <span className="mt-1 flex flex-wrap gap-1" data-tags>
      {tags.map((tag) => (
        <span key={tag} className="rounded-full bg-brand-50 px-2 py-0.5 text-xs text-brand-700">
          {tag}
        </span>
      ))}
    </span>
  );
}

export function PlayerDialog({ recording, playbackUrl }: { recording: RecordingView; playbackUrl: string }) {
  const { t } = useTranslation("recordings");
  return (
    <Modal title={t("audio.playerTitle", { name: recording.name })} closeTo="/" closeLabel={t("audio.close")}>
      {/* The native player is the no-JavaScript path; a short-lived URL with Range support feeds it. */}
      <audio controls preload="metadata" src={playbackUrl} className="w-full" data-player>
        <a href={playbackUrl}>{recording.fileName}</a>
      </audio>
    </Modal>
  );
}

export function EditDialog({ recording, error }: { recording: RecordingView; error: string | null }) {
  const { t } = useTranslation("recordings");
  return (
    <Modal title={t("audio.editTitle", { name: recording.name })} closeTo="/" closeLabel={t("audio.close")}>
      {error ? (
        <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
      <Form method="post" className="flex items-end gap-2">
        <input type="hidden" name="intent" value="rename" />
        <input type="hidden" name="key" value={recording.key} />
        <label className="block flex-1 text-sm font-medium text-slate-700">
          {t("audio.displayName")}
          <input
            name="displayName"
            defaultValue={recording.name}
            className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5"
          />
        </label>
        <button type="submit" className={button}>
          {t("audio.rename")}
        </button>
      </Form>
      <h3 className="mt-6 text-sm font-medium text-slate-700">{t("audio.tags")}</h3>
      {recording.tags.length === 0 ? <p className="text-sm text-slate-500">{t("audio.noTags")}</p> : null}
      <ul className="mt-2 flex flex-wrap gap-2">
        {recording.tags.map((tag) => (
          <li key={tag}>
            <Form
              method="post"
              className="flex items-center gap-1 rounded-full bg-brand-50 py-0.5 pr-1 pl-3 text-sm text-brand-700"
            >
              <input type="hidden" name="intent" value="remove-tag" />
              <input type="hidden" name="key" value={recording.key} />
              <input type="hidden" name="tag" value={tag} />
              {tag}
              <button
                type="submit"
                className="rounded-full px-1.5 hover:bg-brand-100"
                aria-label={t("audio.removeTag", { tag })}
                title={t("audio.removeTag", { tag })}
              >
                ×
              </button>
            </Form>
          </li>
        ))}
      </ul>
      {recording.tags.length < MAX_TAGS ? (
        <Form method="post" className="mt-3 flex items-end gap-2">
          <input type="hidden" name="intent" value="add-tag" />
          <input type="hidden" name="key" value={recording.key} />
          <label className="block flex-1 text-sm font-medium text-slate-700">
            {t("audio.addTag")}
            <input
              name="tag"
              maxLength={TAG_MAX * 2}
              className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5"
            />
          </label>
          <button type="submit" className={quiet}>
            {t("audio.addTag")}
          </button>
        </Form>
      ) : (
        <p className="mt-3 text-xs text-slate-500">{t("errors.tooManyTags")}</p>
      )}
    </Modal>
  );
}

export function DeleteDialog({ recording }: { recording: RecordingView }) {
  const { t } = useTranslation("recordings");
  return (
    <Modal title={t("audio.deleteTitle", { name: recording.name })} closeTo="/" closeLabel={t("audio.cancel")}>
      <p className="text-sm text-slate-700">{t("audio.deleteBody")}</p>
      {recording.canReset ? <p className="mt-2 text-sm text-slate-700">{t("audio.resetBody")}</p> : null}
      <div className="mt-6 flex flex-wrap justify-end gap-2">
        <Link to="/" className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
          {t("audio.cancel")}
        </Link>
        {recording.canReset ? (
          <Form method="post">
            <input type="hidden" name="intent" value="reset" />
            <input type="hidden" name="key" value={recording.key} />
            <button type="submit" className={quiet}>
              {t("audio.reset")}
            </button>
          </Form>
        ) : null}
        <Form method="post">
          <input type="hidden" name="intent" value="delete" />
          <input type="hidden" name="key" value={recording.key} />
          <button
            type="submit"
            className="rounded-md bg-red-600 px-4 py-2 text-sm font-medium text-white hover:bg-red-700"
            data-action="confirm-delete"
          >
            {t("audio.delete")}
          </button>
        </Form>
      </div>
    </Modal>
  );
}
