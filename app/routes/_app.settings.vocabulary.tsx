import { getFormProps, getInputProps, getSelectProps, useForm } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useRouteLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { isUnknownIntent } from "~/components/forms/fields";
import type { RouteHandle } from "~/components/page-scripts";
import { ToastMessage } from "~/components/shell/toast";
import { button, quiet } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { formatDate, type Language } from "~/i18n";
import {
  addOwnVocabularyTerm,
  listOwnVocabulary,
  removeOwnVocabularyTerm,
  USER_VOCABULARY_LIMITS,
  vocabularyLanguageFrom,
  type VocabularyTermView,
} from "~/services/transcription/user-vocabulary.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { hideAsNotFound } from "~/services/web/not-found.server";
import { requireUser } from "~/services/web/session.server";
import { redirectWithToast } from "~/services/web/toast.server";
import type { loader as workspaceLoader } from "./_app";
import { INTENT, vocabularyActionSchema } from "./_app.settings/vocabulary.schema";

// Settings › "Mein Vokabular" (issue 24, ADR 0031): a dialog over the settings page listing the doctor's own terms —
// the ones corrections taught, and ones added here — per language, with what the engine had heard instead and when
// each was added. Plain form posts remove a term (named by its id: one that is not the caller's is a 404) or add one
// by hand; no JavaScript.

export const handle: RouteHandle = { i18n: ["common", "templates", "account"], ownsToast: true };

const HERE = "/settings/vocabulary";
const LANGUAGES = ["de", "en"] as const;

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  return {
    language: await getLanguage(request),
    contentMax: USER_VOCABULARY_LIMITS.contentMax,
    ...(await listOwnVocabulary(user.id)),
  };
}

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const submission = parseWithZod(await request.formData(), { schema: vocabularyActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const form = submission.value;
  if (form.intent === INTENT.remove) {
    const term = await removeOwnVocabularyTerm({ userId: user.id, id: form.id, request }).catch(hideAsNotFound);
    return redirectWithToast(HERE, { type: "success", key: "account:vocabulary.toastRemoved", values: { term } });
  }
  try {
    const language = vocabularyLanguageFrom(form.language);
    const added = await addOwnVocabularyTerm({ userId: user.id, language, content: form.term, request });
    return redirectWithToast(HERE, {
      type: "success",
      key: "account:vocabulary.toastAdded",
      values: { term: added.content },
    });
  } catch (error) {
    if (!(error instanceof DomainError) || (error.kind !== "invalid" && error.kind !== "conflict")) throw error;
    // The dialog again with what was typed, and why it was refused in the reader's language.
    const t = await getFixedTFor(await getLanguage(request), ["account"]);
    const message = t(error.message, error.values);
    const field = error.message.endsWith("languageInvalid") ? "language" : "term";
    return json(
      { result: submission.reply({ fieldErrors: { [field]: [message] } }) },
      { status: error.kind === "conflict" ? statusFor(error.kind) : 400 },
    );
  }
}

export default function MyVocabulary() {
  const { terms, count, max, language, contentMax } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const workspace = useRouteLoaderData<typeof workspaceLoader>("routes/_app");
  const { t } = useTranslation("account");
  const [form, fields] = useForm({
    id: "vocabulary-add",
    lastResult: actionData?.result,
    defaultValue: { intent: INTENT.add, term: "", language },
    shouldValidate: "onSubmit",
  });
  const termHelpId = "vocabulary-term-help";
  return (
    <Modal title={t("vocabulary.title")} closeTo="/settings" closeLabel={t("vocabulary.close")}>
      {/* The workspace shows the toast behind this dialog too; here it is readable. */}
      <ToastMessage toast={workspace?.toast ?? null} />
      <div className="space-y-4 text-sm text-slate-700">
        <p>{t("vocabulary.intro")}</p>
        <p className="font-medium text-slate-900" data-vocabulary-count>
          {t("vocabulary.count", { count, max })}
        </p>
        {LANGUAGES.map((code) => (
          <section key={code} aria-labelledby={`vocabulary-${code}`} data-vocabulary-language={code}>
            <h3 id={`vocabulary-${code}`} className="mb-2 font-medium text-slate-900">
              {t(`vocabulary.language.${code}`)}
            </h3>
            {terms[code].length === 0 ? (
              <p className="text-slate-500" data-empty>
                {t("vocabulary.none")}
              </p>
            ) : (
              <ul className="divide-y divide-slate-200 rounded-lg border border-slate-200">
                {terms[code].map((term) => (
                  <TermRow key={term.id} term={term} language={language} />
                ))}
              </ul>
            )}
          </section>
        ))}
        <Form
          method="post"
          {...getFormProps(form)}
          noValidate
          className="space-y-3 rounded-lg border border-slate-200 p-4"
          data-vocabulary-add
        >
          <h3 className="font-medium text-slate-900">{t("vocabulary.addTitle")}</h3>
          <input type="hidden" name="intent" value={INTENT.add} />
          <label className="block font-medium text-slate-700">
            {t("vocabulary.term")}
            <input
              {...getInputProps(fields.term, { type: "text", ariaAttributes: true })}
              key={fields.term.key}
              aria-describedby={fields.term.errors?.length ? `${fields.term.errorId} ${termHelpId}` : termHelpId}
              className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm font-normal"
              autoComplete="off"
            />
          </label>
          <p id={termHelpId} className="text-xs text-slate-500">
            {t("vocabulary.termHelp", { max: contentMax })}
          </p>
          {fields.term.errors?.length ? (
            <p id={fields.term.errorId} role="alert" className="text-red-700" data-vocabulary-error>
              {fields.term.errors.join(" ")}
            </p>
          ) : null}
          <label className="block font-medium text-slate-700">
            {t("vocabulary.languageLabel")}
            <select
              {...getSelectProps(fields.language, { ariaAttributes: true })}
              key={fields.language.key}
              className="mt-1 block rounded border border-slate-300 px-2 py-1.5 text-sm font-normal"
            >
              {LANGUAGES.map((code) => (
                <option key={code} value={code}>
                  {t(`vocabulary.language.${code}`)}
                </option>
              ))}
            </select>
          </label>
          {fields.language.errors?.length ? (
            <p id={fields.language.errorId} role="alert" className="text-red-700" data-vocabulary-error>
              {fields.language.errors.join(" ")}
            </p>
          ) : null}
          <div className="flex justify-end">
            <button type="submit" className={button} data-action="add-vocabulary-term">
              {t("vocabulary.add")}
            </button>
          </div>
        </Form>
        <div className="flex justify-end">
          <Link to="/settings" className="rounded-md px-4 py-2 text-slate-700 hover:bg-slate-100">
            {t("vocabulary.close")}
          </Link>
        </div>
      </div>
    </Modal>
  );
}

function TermRow({ term, language }: { term: VocabularyTermView; language: Language }) {
  const { t } = useTranslation("account");
  const nameId = `term-${term.id}`;
  return (
    <li className="flex flex-wrap items-center gap-3 px-4 py-3" data-term={term.id}>
      <div className="min-w-0 flex-[1_1_14rem]">
        <p id={nameId} className="font-medium break-words text-slate-900" data-term-content>
          {term.content}
        </p>
        {term.soundsLike.length > 0 ? (
          <p className="mt-1 text-xs text-slate-600" data-sounds-like>
            {t("vocabulary.heardAs", { variants: term.soundsLike.join(", ") })}
          </p>
        ) : null}
        <p className="mt-1 text-xs text-slate-600">
          {t("vocabulary.addedOn")} <time dateTime={term.addedAt}>{formatDate(term.addedAt, language)}</time>
        </p>
      </div>
      <Form method="post">
        <input type="hidden" name="intent" value={INTENT.remove} />
        <input type="hidden" name="id" value={term.id} />
        <button type="submit" className={quiet} aria-describedby={nameId} data-action="remove-vocabulary-term">
          {t("vocabulary.remove")}
        </button>
      </Form>
    </li>
  );
}
