import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { quiet } from "~/components/ui/buttons";
import { SPEAKER_ROLES } from "~/services/speech/transcript-format";
import type { ViewerSpeaker } from "./corrections-view.server";
import { INTENT } from "./schema";

// The speakers' forms of the transcript viewer (issue 24), plain forms in <details>, so they work without JavaScript:
// name a speaker (a role, or a name typed, which wins), merge two speakers, give one paragraph to another speaker.
// Every form carries the version it was made on; a change made meanwhile elsewhere is refused, not overwritten.

const field = "mt-1 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm";

export function NameSpeakerForm({ speaker, version }: { speaker: ViewerSpeaker; version: number }) {
  const { t } = useTranslation("transcriptions");
  return (
    <details className="mt-2 text-sm" data-name-speaker={speaker.speaker}>
      <summary className="cursor-pointer text-slate-700">{t("corrections.speakers.rename")}</summary>
      <Form method="post" className="mt-2 space-y-2">
        <input type="hidden" name="intent" value={INTENT.nameSpeaker} />
        <input type="hidden" name="base_version" value={version} />
        <input type="hidden" name="speaker" value={speaker.speaker} />
        <label className="block">
          {t("corrections.speakers.role")}
          <select name="role" defaultValue={speaker.role} className={field}>
            <option value="">{t("corrections.speakers.roleNone")}</option>
            {SPEAKER_ROLES.map((role) => (
              <option key={role} value={role}>
                {t(`corrections.roles.${role}`)}
              </option>
            ))}
          </select>
        </label>
        <label className="block">
          {t("corrections.speakers.name")}
          <input type="text" name="name" maxLength={40} defaultValue={speaker.name} className={field} />
        </label>
        <button type="submit" className={quiet}>
          {t("corrections.speakers.save")}
        </button>
      </Form>
    </details>
  );
}

function SpeakerSelect({ name, speakers, label }: { name: string; speakers: ViewerSpeaker[]; label: string }) {
  return (
    <label className="block text-sm">
      {label}
      <select name={name} className={field}>
        {speakers.map((s) => (
          <option key={s.speaker} value={s.speaker}>
            {s.label}
          </option>
        ))}
      </select>
    </label>
  );
}

export function MergeSpeakersForm({ speakers, version }: { speakers: ViewerSpeaker[]; version: number }) {
  const { t } = useTranslation("transcriptions");
  if (speakers.length < 2) return null;
  return (
    <details className="mb-6 text-sm" data-merge-speakers>
      <summary className="cursor-pointer text-slate-700">{t("corrections.speakers.merge")}</summary>
      <Form method="post" className="mt-2 grid gap-2 sm:max-w-md sm:grid-cols-2">
        <input type="hidden" name="intent" value={INTENT.mergeSpeakers} />
        <input type="hidden" name="base_version" value={version} />
        <SpeakerSelect name="from" speakers={speakers} label={t("corrections.speakers.mergeFrom")} />
        <SpeakerSelect name="into" speakers={[...speakers].reverse()} label={t("corrections.speakers.mergeInto")} />
        <div className="sm:col-span-2">
          <button type="submit" className={quiet}>
            {t("corrections.speakers.mergeButton")}
          </button>
        </div>
      </Form>
    </details>
  );
}

export function MoveSegmentForm(props: {
  segment: string;
  speaker: string;
  speakers: ViewerSpeaker[];
  version: number;
}) {
  const { t } = useTranslation("transcriptions");
  const others = props.speakers.filter((s) => s.speaker !== props.speaker);
  if (others.length === 0) return null;
  return (
    <details className="mt-1 text-xs text-slate-600" data-move-segment={props.segment}>
      <summary className="cursor-pointer">{t("corrections.speakers.move")}</summary>
      <Form method="post" className="mt-1 flex flex-wrap items-end gap-2">
        <input type="hidden" name="intent" value={INTENT.moveSegment} />
        <input type="hidden" name="base_version" value={props.version} />
        <input type="hidden" name="segment" value={props.segment} />
        <SpeakerSelect name="to" speakers={others} label={t("corrections.speakers.moveTo")} />
        <button type="submit" className={quiet}>
          {t("corrections.speakers.moveButton")}
        </button>
      </Form>
    </details>
  );
}
