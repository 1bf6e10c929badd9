import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { auditLetter } from "~/services/audit/events.server";
import { DomainError } from "~/services/web/domain-error.server";
import { hideAsNotFound } from "~/services/web/not-found.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { getLetter } from "~/services/letters/editing.server";
import { letterLanguage, requestLetter } from "~/services/letters/letters.server";
import { requireUser } from "~/services/web/session.server";
import { meterCall } from "~/services/admin/usage.server";
import { listUserTemplates } from "~/services/templates/templates.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { CHOOSE_TEMPLATE, redoSchema } from "./_app.arztbriefe.$/redo.schema";
import { TemplateRadio } from "~/components/forms/template-radio";

// SPEC §2 template-selection dialog in redo mode, over the Arztbriefe list: the user's templates of the
// letter's language (system and custom, two columns when custom ones exist), the current template shown
// disabled and excluded, no context area. SPEC §4: only possible when the template and the transcript are
// known. The current text is kept as a version (ADR 0012), and the dialog says so.

const LANGUAGE_MISSING = "letters:errors.languageMissing";

/** A malformed key is hidden like a missing one. */
function hideLetter(error: unknown): never {
  return hideAsNotFound(error, { kinds: ["invalid"] });
}

/** Why a redo cannot start, as an i18n key, or null. */
function redoProblem(letter: Awaited<ReturnType<typeof getLetter>>) {
  if (!letter.metadata.template_id) return "letters:errors.templateMissing";
  if (!letter.transcript_key) return "letters:errors.sourceNotFound";
  if (letter.status === "processing") return "letters:errors.busy";
  return null;
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  let letter: Awaited<ReturnType<typeof getLetter>>;
  try {
    letter = await getLetter({ userId: user.id, key: params["*"] ?? "" });
  } catch (error) {
    // SPEC §5: without a language code there are no templates to offer.
    if (error instanceof DomainError && error.message === LANGUAGE_MISSING)
      return { name: "", problem: LANGUAGE_MISSING, current: null, system: [], custom: [] };
    return hideLetter(error);
  }
  await auditLetter(request, user.id, "letter.read", letter.key);
  const problem = redoProblem(letter);
  const currentId = letter.metadata.template_id;
  const templates = problem
    ? { system: [], custom: [] }
    : await listUserTemplates({ userId: user.id, language: letterLanguage(letter.metadata.language_code) });
  const all = [...templates.system, ...templates.custom];
  const choice = (tpl: { id: string; name: string }) => ({ id: tpl.id, name: tpl.name });
  return {
    name: letter.filename,
    problem,
    current: currentId ? { id: currentId, name: all.find((tpl) => tpl.id === currentId)?.name ?? currentId } : null,
    system: templates.system.filter((tpl) => tpl.id !== currentId).map(choice),
    custom: templates.custom.filter((tpl) => tpl.id !== currentId).map(choice),
  };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const form = await request.formData();
  const letter = await getLetter({ userId: user.id, key: params["*"] ?? "" }).catch(hideLetter);
  const t = await getFixedTFor(await getLanguage(request), ["common", "recordings", "letters"]);
  const redone = (outcome: "success" | "failure") => auditLetter(request, user.id, "letter.redo", letter.key, outcome);
  const submission = parseWithZod(form, { schema: redoSchema });
  // The letter's own problem first; otherwise the form's only failure: no template chosen.
  const problem = redoProblem(letter);
  if (problem || submission.status !== "success") {
    await redone("failure");
    return json({ error: t(problem ?? CHOOSE_TEMPLATE) }, { status: 400 });
  }
  const { templateId } = submission.value;
  meterCall(user.id, "medical-letter-v2");
  try {
    await requestLetter({ userId: user.id, sourceKey: letter.metadata.source_key, kind: "redo", templateId });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await redone("failure");
    // The recording behind the letter is gone: SPEC §8 "source file not found".
    const key =
      error.message === "recordings:errors.recordingNotFound" ? "letters:errors.sourceNotFound" : error.message;
    return json({ error: t(key, error.values) }, { status: error.kind === "rate_limited" ? 429 : 400 });
  }
  await redone("success");
  return redirectWithToast("/arztbriefe", { type: "success", key: "letters:toast.redoStarted" });
}

export default function RedoDialog() {
  const data = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const { t } = useTranslation("letters");
  const columns = (
    [
      ["system", data.system],
      ["custom", data.custom],
    ] as const
  ).filter(([, list]) => list.length > 0);
  const choices = data.system.length + data.custom.length;
  return (
    <Modal title={t("redo.title", { name: data.name })} closeTo="/arztbriefe" closeLabel={t("redo.cancel")}>
      <div data-redo-dialog>
        {actionData?.error ? (
          <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800">
            {actionData.error}
          </p>
        ) : null}
        {data.problem ? (
          <p
            role="alert"
            className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800"
            data-problem
          >
            {t(data.problem)}
          </p>
        ) : (
          <Form method="post" className="space-y-4">
            <p className="text-sm text-slate-700">{t("redo.intro")}</p>
            <fieldset className="text-sm">
              <legend className="font-medium text-slate-700">{t("redo.template")}</legend>
              {data.current ? (
                <label className="mt-2 flex items-center gap-2 text-slate-500" data-current-template={data.current.id}>
                  <input type="radio" disabled aria-describedby="redo-current-note" />
                  {t("redo.currentLabel", { name: data.current.name })}
                </label>
              ) : null}
              <p id="redo-current-note" className="sr-only">
                {t("redo.currentNote")}
              </p>
              {choices === 0 ? (
                <p className="mt-2 text-slate-600" data-no-templates>
                  {t("redo.noOther")}
                </p>
              ) : (
                <div className={`mt-2 grid gap-4 ${data.custom.length ? "md:grid-cols-2" : ""}`} data-template-choice>
                  {columns.map(([kind, list]) => (
                    <div key={kind}>
                      <p className="mb-1 text-xs tracking-wide text-slate-500 uppercase">{t(`redo.${kind}`)}</p>
                      {list.map((tpl, i) => (
                        <TemplateRadio
                          key={tpl.id}
                          template={tpl}
                          defaultChecked={kind === columns[0][0] && i === 0}
                          required
                        />
                      ))}
                    </div>
                  ))}
                </div>
              )}
            </fieldset>
            <div className="flex flex-wrap justify-end gap-2">
              <Link to="/arztbriefe" className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
                {t("redo.cancel")}
              </Link>
              <button type="submit" className={button} disabled={choices === 0} data-action="confirm-redo">
                {t("redo.submit")}
              </button>
            </div>
          </Form>
        )}
      </div>
    </Modal>
  );
}
