import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { quiet } from "~/components/ui/buttons";
import { clock } from "~/components/ui/clock";
import type {
  EvidenceCitation,
  EvidenceSentence,
  EvidenceSource,
  LetterEvidence,
} from "~/services/letters/letter-evidence.server";
import { INTENT } from "./schema";

// The editor's check (issue 24): the letter sentence by sentence with the transcript segments each rests on, the
// flags of the independent checker with a button to confirm each, and the facts the letter may have left out with a
// button that turns one into a proposal. Plain links and forms: it works without JavaScript. Everything a model or a
// transcript wrote is rendered by React as text.

export type EvidenceCounts = LetterEvidence["counts"];

const statusStyle: Record<EvidenceSentence["status"], string> = {
  supported: "bg-emerald-100 text-emerald-900",
  unsupported: "bg-red-100 text-red-900",
  neutral: "bg-slate-100 text-slate-600",
  doctor: "bg-sky-100 text-sky-900",
};

/** The header's line: what is left to look at, or that nothing is; a link to the check. */
export function EvidenceSummary({ counts, to }: { counts: EvidenceCounts | null; to: string }) {
  const { t } = useTranslation("letters");
  if (!counts)
    return (
      <p className="text-xs text-slate-500" data-evidence-summary="unavailable">
        {t("evidence.unavailable")}
      </p>
    );
  const parts = [
    counts.unsupported > 0 ? t("evidence.unsupported", { count: counts.unsupported }) : null,
    counts.flagged > 0 ? t("evidence.flagged", { count: counts.flagged }) : null,
    counts.citations > 0 ? t("evidence.citations", { count: counts.citations }) : null,
    counts.omissions > 0 ? t("evidence.omissions", { count: counts.omissions }) : null,
  ].filter((part): part is string => part !== null);
  const open = parts.length > 0;
  return (
    <p className="text-sm" data-evidence-summary={open ? "open" : "clear"}>
      <Link
        to={to}
        aria-label={t("evidence.summaryLabel")}
        className={`inline-block rounded px-2 py-0.5 underline-offset-2 hover:underline ${
          open ? "bg-amber-100 text-amber-900" : "bg-emerald-50 text-emerald-800"
        }`}
      >
        {open ? parts.join(" · ") : t("evidence.allSupported")}
      </Link>
    </p>
  );
}

function Sources({
  sources,
  transcriptPath,
  audioUrl,
}: {
  sources: EvidenceSource[];
  transcriptPath: string;
  audioUrl: string | null;
}) {
  const { t } = useTranslation("letters");
  return (
    <ul className="mt-1 space-y-2">
      {sources.map((source) => (
        <li key={source.id} className="rounded border border-slate-200 bg-slate-50 px-2 py-1.5" data-source={source.id}>
          <p className="text-xs text-slate-600">
            <a
              href={`${transcriptPath}#seg-${source.id}`}
              title={t("evidence.openInTranscript")}
              className="font-medium text-brand-700 hover:underline"
            >
              {t("evidence.source", { speaker: source.speaker, time: clock(source.start) })}
            </a>
            {source.cited ? (
              <span className="ml-2 rounded-full bg-emerald-50 px-1.5 py-0.5 text-emerald-800" data-cited>
                {t("evidence.citedHolds")}
              </span>
            ) : null}
          </p>
          <p className="mt-0.5 line-clamp-3 text-sm text-slate-800">{source.text}</p>
          {audioUrl ? (
            // A media fragment starts the audio at that second, with or without JavaScript; nothing loads until played.
            <audio
              controls
              preload="none"
              src={`${audioUrl}#t=${Math.max(0, Math.floor(source.start))}`}
              className="mt-1 h-8 w-full max-w-xs"
              aria-label={t("evidence.listen", { time: clock(source.start) })}
            />
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/** The sources the model named that the checker could not confirm: shown, so the doctor sees what was claimed. */
function CitationNotes({ citation, transcriptPath }: { citation: EvidenceCitation; transcriptPath: string }) {
  const { t } = useTranslation("letters");
  if (citation.notHolding.length === 0 && citation.unknown.length === 0) return null;
  return (
    <div className="mt-2 text-xs text-slate-700" data-citation-rejected>
      <p>{t("evidence.citedNotHolding", { count: citation.notHolding.length + citation.unknown.length })}</p>
      <ul className="mt-1 list-inside list-disc">
        {citation.notHolding.map((source) => (
          <li key={source.id} data-cited-not-holding={source.id}>
            <a href={`${transcriptPath}#seg-${source.id}`} className="text-brand-700 hover:underline">
              {t("evidence.source", { speaker: source.speaker, time: clock(source.start) })}
            </a>
            : <span className="text-slate-600">{source.text}</span>
          </li>
        ))}
        {citation.unknown.map((id) => (
          <li key={id} data-cited-unknown={id}>
            {t("evidence.citedUnknown", { id })}
          </li>
        ))}
      </ul>
    </div>
  );
}

function Sentence({
  sentence,
  transcriptPath,
  audioUrl,
  busy,
}: {
  sentence: EvidenceSentence;
  transcriptPath: string;
  audioUrl: string | null;
  busy: boolean;
}) {
  const { t } = useTranslation("letters");
  const open = sentence.flags.some((f) => !f.confirmed);
  return (
    <li
      className={`rounded-md border p-3 ${open ? "border-amber-300 bg-amber-50/40" : "border-slate-200 bg-white"}`}
      data-sentence={sentence.hash}
      data-status={sentence.status}
    >
      <p className="text-sm leading-relaxed">
        {sentence.text}{" "}
        <span className={`ml-1 rounded-full px-2 py-0.5 text-xs whitespace-nowrap ${statusStyle[sentence.status]}`}>
          {t(`evidence.status.${sentence.status}`)}
        </span>
      </p>
      {sentence.flags.length > 0 ? (
        <ul className="mt-2 space-y-1">
          {sentence.flags.map((flag) => (
            <li key={flag.kind} className="flex flex-wrap items-center gap-2 text-sm" data-flag={flag.kind}>
              <span className={flag.confirmed ? "text-slate-500" : "font-medium text-amber-900"}>
                {t(`evidence.flag.${flag.kind}`)}
              </span>
              {flag.kind !== "unsupported" && flag.kind !== "citation" ? (
                <span className="text-xs text-slate-600">{t("evidence.flagAt", { text: flag.text })}</span>
              ) : null}
              {flag.confirmed ? (
                <span className="text-xs text-emerald-800" data-confirmed>
                  ✓ {t("evidence.confirmed")}
                </span>
              ) : busy ? null : (
                <Form method="post" className="inline">
                  <input type="hidden" name="intent" value={INTENT.confirmFlag} />
                  <input type="hidden" name="sentence" value={sentence.hash} />
                  <input type="hidden" name="flag" value={flag.kind} />
                  <button type="submit" className={`${quiet} py-0.5 text-xs`} data-action="confirm-flag">
                    {t("evidence.confirm")}
                  </button>
                </Form>
              )}
            </li>
          ))}
        </ul>
      ) : null}
      {sentence.citation ? <CitationNotes citation={sentence.citation} transcriptPath={transcriptPath} /> : null}
      {sentence.status === "supported" || sentence.status === "unsupported" ? (
        <details className="mt-2" open={sentence.status === "unsupported" || undefined}>
          <summary className="cursor-pointer text-xs text-slate-600">
            {t("evidence.sources")} ({sentence.sources.length})
          </summary>
          {sentence.sources.length > 0 ? (
            <Sources sources={sentence.sources} transcriptPath={transcriptPath} audioUrl={audioUrl} />
          ) : (
            <p className="mt-1 text-xs text-slate-500">{t("evidence.noSources")}</p>
          )}
        </details>
      ) : null}
    </li>
  );
}

export function EvidenceView({
  evidence,
  transcriptPath,
  audioUrl,
  busy,
}: {
  evidence: LetterEvidence | null;
  transcriptPath: string | null;
  audioUrl: string | null;
  busy: boolean;
}) {
  const { t } = useTranslation("letters");
  if (!evidence || !transcriptPath)
    return (
      <p className="text-sm text-slate-600" data-evidence="unavailable">
        {t("evidence.unavailable")}
      </p>
    );
  const kindLabel = (kind: string) => t(`evidence.kind.${kind}`);
  return (
    <div className="space-y-5" data-evidence>
      <p className="text-sm text-slate-600">{t("evidence.intro")}</p>
      {evidence.sections.map((section, i) => (
        <section key={`${section.title}-${i}`} data-evidence-section={section.title}>
          <h3 className="mb-2 text-sm font-semibold text-slate-800">{section.title || t("editor.fullTextTitle")}</h3>
          <ol className="space-y-2">
            {section.sentences.map((sentence, j) => (
              <Sentence
                key={`${sentence.hash}-${j}`}
                sentence={sentence}
                transcriptPath={transcriptPath}
                audioUrl={audioUrl}
                busy={busy}
              />
            ))}
          </ol>
        </section>
      ))}
      <section data-omissions>
        <h3 className="mb-1 text-sm font-semibold text-slate-800">{t("evidence.omissionsTitle")}</h3>
        <p className="mb-2 text-xs text-slate-600">{t("evidence.omissionsIntro")}</p>
        {evidence.omissions.length === 0 && evidence.emptySections.length === 0 ? (
          <p className="text-sm text-slate-500">{t("evidence.noOmissions")}</p>
        ) : (
          <ol className="space-y-2">
            {evidence.emptySections.map((empty, i) => (
              <li
                key={`empty-${i}`}
                className="rounded-md border border-amber-300 bg-amber-50/40 p-3 text-sm"
                data-empty-section={empty.section}
              >
                <p>{t("evidence.emptySection", { section: empty.section, kind: kindLabel(empty.kind) })}</p>
                <Sources sources={empty.sources} transcriptPath={transcriptPath} audioUrl={audioUrl} />
              </li>
            ))}
            {evidence.omissions.map((omission, i) => (
              <li
                key={`omission-${i}`}
                className="rounded-md border border-amber-300 bg-amber-50/40 p-3 text-sm"
                data-omission={omission.kind}
              >
                <p>
                  <span className="font-medium">{kindLabel(omission.kind)}:</span> {omission.text}
                </p>
                <p className="mt-0.5 text-xs text-slate-600">
                  {omission.section ? t("evidence.belongsIn", { section: omission.section }) : t("evidence.noSection")}
                </p>
                {omission.emptySection && omission.section ? (
                  <p className="mt-0.5 text-xs text-amber-900" data-empty-section={omission.section}>
                    {t("evidence.emptySection", { section: omission.section, kind: kindLabel(omission.kind) })}
                  </p>
                ) : null}
                <Sources sources={omission.sources} transcriptPath={transcriptPath} audioUrl={audioUrl} />
                {omission.section && !busy ? (
                  <Form method="post" className="mt-2">
                    <input type="hidden" name="intent" value={INTENT.proposeOmission} />
                    <input type="hidden" name="omission" value={i} />
                    <button type="submit" className={`${quiet} text-xs`} data-action="propose-omission">
                      {t("evidence.propose")}
                    </button>
                  </Form>
                ) : null}
              </li>
            ))}
          </ol>
        )}
      </section>
    </div>
  );
}
