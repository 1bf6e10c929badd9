import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { danger } from "~/components/ui/buttons";
import { AudioPlayer } from "~/components/islands/audio-player";
import { Modal } from "~/components/ui/modal";
import { MAX_TAGS, TAG_MAX } from "~/models/recording-rules";
import { INTENT } from "./intents";
import { button, quiet, type RecordingView } from "./shared";

/** `back`: the list page the dialog was opened over (its close link returns there). */
export function PlayerDialog({
  recording,
  playbackUrl,
  back,
}: {
  recording: RecordingView;
  playbackUrl: string;
  back: string;
}) {
  const { t } = useTranslation("recordings");
  return (
    <Modal title={t("audio.playerTitle", { name: recording.name })} closeTo={back} closeLabel={t("audio.close")}>
      <AudioPlayer
        src={playbackUrl}
        fallback={
          // The native player is the no-JavaScript path; a short-lived URL with Range support feeds it.
          <audio controls preload="metadata" src={playbackUrl} className="w-full" data-player>
            <a href={playbackUrl}>{recording.fileName}</a>
          </audio>
        }
      />
    </Modal>
  );
}

export function EditDialog({
  recording,
  error,
  back,
}: {
  recording: RecordingView;
  error: string | null;
  back: string;
}) {
  const { t } = useTranslation("recordings");
  return (
    <Modal title={t("audio.editTitle", { name: recording.name })} closeTo={back} closeLabel={t("audio.close")}>
      {error ? (
        <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
      <Form method="post" className="flex items-end gap-2">
        <input type="hidden" name="intent" value={INTENT.rename} />
        <input type="hidden" name="key" value={recording.key} />
        <label className="block flex-1 text-sm font-medium text-slate-700">
          {t("audio.displayName")}
          <input
            name="displayName"
            defaultValue={recording.displayName ?? ""}
            placeholder={recording.name}
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
              <input type="hidden" name="intent" value={INTENT.removeTag} />
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
          <input type="hidden" name="intent" value={INTENT.addTag} />
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
      <h3 className="mt-6 text-sm font-medium text-slate-700">{t("consent.kind")}</h3>
      <p className="mt-1 text-sm text-slate-700" data-consent={recording.consent ? "documented" : "missing"}>
        {recording.consent ?? t("consent.notDocumented")}
      </p>
      <Link
        to={`/?withdraw=${encodeURIComponent(recording.key)}`}
        className="mt-2 inline-block text-sm text-red-700 underline"
        data-action="withdraw-consent"
      >
        {t("consent.withdraw")}
      </Link>
    </Modal>
  );
}

/** The patient withdrew the consent (issue 22): confirmed here, then everything of the recording is deleted. */
export function WithdrawConsentDialog({ recording, back }: { recording: RecordingView; back: string }) {
  const { t } = useTranslation("recordings");
  return (
    <Modal title={t("consent.withdrawTitle")} closeTo={back} closeLabel={t("audio.cancel")}>
      <p className="text-sm font-medium text-slate-800">{recording.name}</p>
      <p className="mt-2 text-sm text-slate-700">{t("consent.withdrawText")}</p>
      <div className="mt-6 flex flex-wrap justify-end gap-2">
        <Link to={back} className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
          {t("audio.cancel")}
        </Link>
        <Form method="post">
          <input type="hidden" name="intent" value={INTENT.withdrawConsent} />
          <input type="hidden" name="key" value={recording.key} />
          <button type="submit" className={danger} data-action="confirm-withdraw">
            {t("consent.withdrawConfirm")}
          </button>
        </Form>
      </div>
    </Modal>
  );
}

export function DeleteDialog({ recording, back }: { recording: RecordingView; back: string }) {
  const { t } = useTranslation("recordings");
  return (
    <Modal title={t("audio.deleteTitle", { name: recording.name })} closeTo={back} closeLabel={t("audio.cancel")}>
      <p className="text-sm text-slate-700">{t("audio.deleteBody")}</p>
      {recording.canReset ? <p className="mt-2 text-sm text-slate-700">{t("audio.resetBody")}</p> : null}
      <div className="mt-6 flex flex-wrap justify-end gap-2">
        <Link to={back} className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
          {t("audio.cancel")}
        </Link>
        {recording.canReset ? (
          <Form method="post">
            <input type="hidden" name="intent" value={INTENT.reset} />
            <input type="hidden" name="key" value={recording.key} />
            <button type="submit" className={quiet}>
              {t("audio.reset")}
            </button>
          </Form>
        ) : null}
        <Form method="post">
          <input type="hidden" name="intent" value={INTENT.delete} />
          <input type="hidden" name="key" value={recording.key} />
          <button type="submit" className={danger} data-action="confirm-delete">
            {t("audio.delete")}
          </button>
        </Form>
      </div>
    </Modal>
  );
}
