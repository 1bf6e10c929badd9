import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import { clock } from "~/components/ui/clock";
import type { ReviewView } from "./corrections-view.server";
import { INTENT } from "./schema";

// The review of uncertain words (issue 24), one word at a time, without JavaScript: the word in its sentence, why it
// is asked about, the audio of that moment (a media fragment: the browser's own player plays from a second before to
// a second after), a form to type the fix or confirm the word — once or at every identical occurrence — and Back,
// Skip and End as links. Laid out in one column so that it works on a phone.

type Props = {
  review: ReviewView;
  pathname: string;
  version: number;
  /** The failure of the last post, with what was typed. */
  failure: { error: string; conflict: boolean; text?: string } | null;
};

export function ReviewPanel({ review, pathname, version, failure }: Props) {
  const { t } = useTranslation("transcriptions");
  const { item, position, total } = review;
  const at = (n: number) => `${pathname}?review=${n}`;
  return (
    <section className="mb-6 rounded-md border border-amber-300 bg-amber-50 p-4" data-review aria-live="polite">
      <div className="mb-3 flex flex-wrap items-baseline justify-between gap-2">
        <h3 className="text-base font-semibold text-slate-900">{t("corrections.review.title")}</h3>
        {item ? (
          <p className="text-sm font-medium text-slate-700" data-review-progress>
            {t("corrections.review.progress", { n: position, total })}
          </p>
        ) : null}
      </div>

      {failure ? (
        <p className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-900" role="alert" data-error>
          {failure.error}
        </p>
      ) : null}

      {item ? (
        <>
          <p className="mb-2 text-lg leading-relaxed" data-review-context>
            {item.before ? `${item.before} ` : ""}
            <mark className={`confidence-${item.level} px-1 font-semibold`} data-review-word>
              {item.text}
            </mark>
            {item.after ? `${item.afterJoins ? "" : " "}${item.after}` : ""}
          </p>
          <p className="mb-1 text-xs text-slate-600">
            {t("corrections.review.heardAt", { time: clock(item.start), percent: item.percent })}
          </p>
          <div className="mb-3 text-sm text-slate-700" data-review-reasons>
            <span className="font-medium">{t("corrections.review.why")}</span>{" "}
            <ul className="inline">
              {item.reasons.map((reason) => (
                <li key={reason} className="inline after:content-['_·_'] last:after:content-none">
                  {reason}
                </li>
              ))}
            </ul>
          </div>

          {review.audio ? (
            <figure className="mb-4">
              <figcaption className="mb-1 text-xs text-slate-600">{t("corrections.review.audio")}</figcaption>
              <audio controls preload="none" src={review.audio} className="w-full" data-review-audio />
            </figure>
          ) : (
            <p className="mb-4 text-xs text-slate-600">{t("corrections.review.noAudio")}</p>
          )}

          <Form method="post" className="space-y-3" data-review-form>
            <input type="hidden" name="base_version" value={version} />
            <input type="hidden" name="segment" value={item.segment} />
            <input type="hidden" name="index" value={item.index} />
            <input type="hidden" name="review" value={position} />
            <label className="block text-sm font-medium text-slate-700">
              {t("corrections.review.fix")}
              <input
                type="text"
                name="text"
                maxLength={60}
                autoComplete="off"
                defaultValue={failure?.text ?? item.text}
                className="mt-1 block w-full rounded-md border border-slate-300 px-3 py-2 text-base"
              />
            </label>
            {item.occurrences > 1 ? (
              <label className="flex items-start gap-2 text-sm">
                <input type="checkbox" name="apply_to_all" value="yes" className="mt-1" />
                <span>{t("corrections.review.applyAll", { count: item.occurrences })}</span>
              </label>
            ) : null}
            <label className="flex items-start gap-2 text-sm">
              <input type="checkbox" name="add_to_vocabulary" value="yes" defaultChecked className="mt-1" />
              <span>{t("corrections.review.addToVocabulary")}</span>
            </label>
            <div className="flex flex-wrap gap-2">
              <button type="submit" name="intent" value={INTENT.correctWord} className={button}>
                {t("corrections.review.save")}
              </button>
              <button type="submit" name="intent" value={INTENT.confirmWord} className={quiet}>
                {t("corrections.review.confirm")}
              </button>
            </div>
          </Form>

          <nav className="mt-4 flex flex-wrap gap-2 text-sm" aria-label={t("corrections.review.title")}>
            {position > 1 ? (
              <Link to={at(position - 1)} className={quiet} data-review-back>
                {t("corrections.review.back")}
              </Link>
            ) : null}
            {position < total ? (
              <Link to={at(position + 1)} className={quiet} data-review-skip>
                {t("corrections.review.skip")}
              </Link>
            ) : null}
            <Link to={pathname} className={quiet} data-review-end>
              {t("corrections.review.end")}
            </Link>
          </nav>
        </>
      ) : (
        <div>
          <p className="mb-3 text-sm text-slate-700" data-review-done>
            {t("corrections.review.done")}
          </p>
          <Link to={pathname} className={quiet} data-review-end>
            {t("corrections.review.end")}
          </Link>
        </div>
      )}
      <p className="mt-4 text-xs text-slate-500">{t("corrections.review.lowOnly")}</p>
    </section>
  );
}
