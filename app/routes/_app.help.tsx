import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import {
  BulletList,
  HelpBlock,
  HelpSubheading,
  IconList,
  StatusList,
  type HelpIconName,
} from "~/components/ui/help-blocks";
import { SectionHeader } from "~/components/ui/section";
import { getConfig } from "~/services/config/config.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";

// SPEC §2 "Help and Information". Static content: no island, no scripts, so the page ships no JavaScript.
export const handle: RouteHandle = { i18n: ["common", "help"] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

/**
 * Who besides this server processes what a clinician records or writes, for the engines this installation uses
 * (docs/intended-use.md § "Sub-processors"): each a translation key of help.json's intendedUse.processors.
 */
function processorsInUse() {
  const { speech, llm } = getConfig();
  const used = new Set<string>();
  if (speech.engine === "speechmatics" || speech.live.engine === "speechmatics") used.add("speechmatics");
  if (speech.engine === "openai") used.add("openaiSpeech");
  if (llm.engine === "openai") used.add("openaiLlm");
  return used.size ? [...used] : ["none"];
}

export async function loader({ request }: LoaderFunctionArgs) {
  await requireUser(request);
  const t = await getFixedTFor(await getLanguage(request), "help");
  return { supportEmail: getConfig().supportEmail, title: `${t("title")} · Skribent`, processors: processorsInUse() };
}

// The content is driven by translation keys (public/locales/{de,en}/help.json).
const mainSections = [
  {
    id: "audio",
    icon: "audio",
    points: ["record", "upload", "language", "template", "mode", "list", "rename", "delete"],
  },
  {
    id: "transcriptions",
    icon: "transcriptions",
    points: ["list", "view", "confidence", "viewerActions", "createLetter", "notPatient"],
  },
  {
    id: "arztbriefe",
    icon: "arztbriefe",
    points: ["list", "views", "save", "refine", "prompts", "versions", "copy", "redo", "delete"],
  },
] as const satisfies ReadonlyArray<{ id: string; icon: HelpIconName; points: readonly string[] }>;

// SPEC §4: the labels themselves live in common.json and are shared with the lists.
const transcriptionStatuses = ["pending", "processing", "completed", "failed"] as const;
const letterStatuses = ["pending", "processing", "completed", "failed", "structure_error"] as const;

const iconLists = [
  {
    id: "audio",
    actions: [
      ["transcribe", "sparkle"],
      ["play", "play"],
      ["delete", "trash"],
      ["refresh", "refresh"],
      ["rename", "pencil"],
    ],
  },
  {
    id: "transcriptions",
    actions: [
      ["createLetter", "arztbriefe"],
      ["openLetter", "arztbriefe"],
      ["view", "eye"],
      ["delete", "trash"],
      ["refresh", "refresh"],
    ],
  },
  {
    id: "arztbriefe",
    actions: [
      ["view", "eye"],
      ["redo", "redo"],
      ["delete", "trash"],
      ["refresh", "refresh"],
    ],
  },
] as const satisfies ReadonlyArray<{ id: string; actions: ReadonlyArray<readonly [string, HelpIconName]> }>;

const features = [
  { id: "recording", icon: "audio", points: ["live", "speakers", "wait", "awake", "pause", "requirements"] },
  { id: "upload", icon: "upload", points: ["formats", "dragDrop", "autoStart", "errors"] },
  { id: "transcription", icon: "transcriptions", points: ["speakers", "confidence", "language"] },
  { id: "letters", icon: "sparkle", points: ["templates", "customTemplates", "context", "records", "draft"] },
] as const satisfies ReadonlyArray<{ id: string; icon: HelpIconName; points: readonly string[] }>;

const tips = [
  "checkConfidence",
  "templateFirst",
  "templates",
  "aiLearning",
  "retry",
  "languageSwitch",
  "savedPrompts",
  "copySection",
  "mobile",
  "noJavaScript",
  "dataHandling",
  "review",
] as const;

const blocks = ["main", "icons", "features", "tips", "intendedUse", "contact"] as const;

const intendedUse = {
  for: ["document", "draft", "review"],
  notFor: ["diagnosis", "therapy", "triage", "chat"],
} as const;

export default function HelpPage() {
  const { supportEmail, processors } = useLoaderData<typeof loader>();
  const { t } = useTranslation("help");
  const mailto = `mailto:${supportEmail}?subject=${encodeURIComponent(t("contact.subject"))}`;
  return (
    <>
      <SectionHeader title={t("title")} intro={t("intro")} />

      <nav aria-labelledby="help-toc" className="mb-6 rounded-lg border border-slate-200 bg-white p-4">
        <h2 id="help-toc" className="text-sm font-semibold text-slate-900">
          {t("toc")}
        </h2>
        <ol className="mt-2 flex flex-wrap gap-2 text-sm">
          {blocks.map((block) => (
            <li key={block}>
              <a
                href={`#${block}`}
                className="inline-block rounded-md bg-brand-50 px-3 py-1 text-brand-700 hover:underline"
              >
                {t(`${block}.heading`)}
              </a>
            </li>
          ))}
        </ol>
      </nav>

      <div className="space-y-6">
        <HelpBlock id="main" title={t("main.heading")} intro={t("main.intro")}>
          <div className="grid gap-4 lg:grid-cols-3">
            {mainSections.map((section) => (
              <div key={section.id} className="rounded-lg border border-slate-200 p-4">
                <HelpSubheading icon={section.icon}>{t(`main.${section.id}.title`)}</HelpSubheading>
                <p className="mt-2 text-sm text-slate-600">{t(`main.${section.id}.summary`)}</p>
                <BulletList items={section.points.map((p) => t(`main.${section.id}.points.${p}`))} />
              </div>
            ))}
          </div>
          <div className="mt-6 border-t border-slate-100 pt-4">
            <HelpSubheading>{t("status.heading")}</HelpSubheading>
            <p className="mt-1 text-sm text-slate-600">{t("status.intro")}</p>
            <div className="grid gap-x-8 md:grid-cols-2">
              <StatusList
                title={t("status.transcriptionTitle")}
                items={transcriptionStatuses.map((s) => ({
                  label: t(`status.transcription.${s}`, { ns: "common" }),
                  meaning: t(`status.transcription.${s}`),
                }))}
              />
              <StatusList
                title={t("status.letterTitle")}
                items={letterStatuses.map((s) => ({
                  label: t(`status.letter.${s}`, { ns: "common" }),
                  meaning: t(`status.letter.${s}`),
                }))}
              />
            </div>
          </div>
        </HelpBlock>

        <HelpBlock id="icons" title={t("icons.heading")} intro={t("icons.intro")}>
          <div className="grid gap-6 lg:grid-cols-3">
            {iconLists.map((list) => (
              <div key={list.id}>
                <HelpSubheading icon={list.id}>{t(`icons.${list.id}.title`)}</HelpSubheading>
                <IconList
                  items={list.actions.map(([action, icon]) => ({
                    icon,
                    label: t(`icons.${list.id}.${action}.label`),
                    meaning: t(`icons.${list.id}.${action}.meaning`),
                  }))}
                />
              </div>
            ))}
          </div>
        </HelpBlock>

        <HelpBlock id="features" title={t("features.heading")} intro={t("features.intro")}>
          <div className="grid gap-4 md:grid-cols-2">
            {features.map((feature) => (
              <div key={feature.id} className="rounded-lg border border-slate-200 p-4">
                <HelpSubheading icon={feature.icon}>{t(`features.${feature.id}.title`)}</HelpSubheading>
                <BulletList items={feature.points.map((p) => t(`features.${feature.id}.${p}`))} />
              </div>
            ))}
          </div>
        </HelpBlock>

        <HelpBlock id="tips" title={t("tips.heading")} intro={t("tips.intro")}>
          <BulletList items={tips.map((tip) => t(`tips.${tip}`))} />
        </HelpBlock>

        <HelpBlock id="intendedUse" title={t("intendedUse.heading")} intro={t("intendedUse.intro")}>
          <div className="grid gap-4 md:grid-cols-2">
            <div>
              <HelpSubheading>{t("intendedUse.forTitle")}</HelpSubheading>
              <BulletList items={intendedUse.for.map((point) => t(`intendedUse.for.${point}`))} />
            </div>
            <div>
              <HelpSubheading>{t("intendedUse.notForTitle")}</HelpSubheading>
              <BulletList items={intendedUse.notFor.map((point) => t(`intendedUse.notFor.${point}`))} />
            </div>
          </div>
          <div className="mt-4 border-t border-slate-100 pt-4" data-processors>
            <HelpSubheading>{t("intendedUse.processorsTitle")}</HelpSubheading>
            <BulletList items={processors.map((processor) => t(`intendedUse.processors.${processor}`))} />
            <p className="mt-2 text-xs text-slate-500">{t("intendedUse.mdr")}</p>
          </div>
        </HelpBlock>

        <section
          id="contact"
          aria-labelledby="contact-title"
          className="scroll-mt-20 rounded-lg border border-brand-100 bg-brand-50 p-5 md:p-6"
        >
          <h2 id="contact-title" className="text-lg font-semibold tracking-tight text-brand-900">
            {t("contact.heading")}
          </h2>
          <p className="mt-1 text-sm text-slate-700">{t("contact.body")}</p>
          <p className="mt-3">
            <a
              href={mailto}
              className="font-medium text-brand-700 underline underline-offset-2 hover:text-brand-900"
              data-support-email
            >
              {supportEmail}
            </a>
          </p>
          <p className="mt-3 text-xs text-slate-600">{t("contact.note")}</p>
        </section>
      </div>
    </>
  );
}
