import { json, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { button, quiet } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { auditLetter } from "~/services/audit/events.server";
import {
  EXPORT_ERRORS,
  EXPORT_LIMITS,
  type ExportFormat,
  exportFormatFrom,
  exportLetter,
  exportStart,
  exportedLetter,
  readExportDetails,
} from "~/services/letters/export.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { hideAsNotFound } from "~/services/web/not-found.server";
import { requireUser } from "~/services/web/session.server";
import { exportFormValues } from "./_app.arztbriefe.$/export-form";
import { downloadUrl, editorUrl, exportUrl, printUrl } from "./_app.arztbriefe.$/paths";

// The export dialog of a finished letter (issue 25), over the Arztbriefe list: recipient, patient line, subject and
// date — the kept values of this letter or empty — and one button per way out: PDF after DIN 5008, DOCX and FHIR
// document post to the download route (resources.arztbrief-export.$: a page's action cannot answer a file), text for
// the practice software is shown here to copy, and the print view opens as a page of its own. Plain forms, with or
// without JavaScript; the fields' own limits keep a browser from sending what the server refuses, and a refusal from
// the download route comes back here by name (`?error=`). The letter's language decides the letter's fixed wording;
// the screen's language decides this dialog's.

export const handle: RouteHandle = { i18n: ["common", "letters"], scripts: ["letter"] };

export const meta: MetaFunction = () => [{ title: "Skribent" }];

/** A malformed key, and a letter without a language (it has no letter wording), are hidden like a missing one. */
function hideLetter(error: unknown): never {
  return hideAsNotFound(error, { kinds: ["invalid"] });
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const letter = await exportedLetter({ userId: user.id, key: params["*"] ?? "" }).catch(hideLetter);
  const { details, kept } = await exportStart({ userId: user.id, letter });
  await auditLetter(request, user.id, "letter.read", letter.key);
  // A refusal of the download route, by name and its non-personal values: only names it gives are shown.
  const query = new URL(request.url).searchParams;
  const refused = query.get("error");
  const t = await getFixedTFor(await getLanguage(request), ["common", "letters"]);
  const values = Object.fromEntries(
    ["field", "max", "formats"].flatMap((name) => {
      const value = query.get(name);
      return value && /^[\w ,]{1,40}$/.test(value) ? [[name, value]] : [];
    }),
  );
  return {
    key: letter.key,
    name: letter.filename,
    busy: letter.status === "processing",
    details,
    kept,
    today: new Date().toISOString().slice(0, 10),
    refused:
      refused === "busy"
        ? t("letters:errors.busy")
        : refused && (EXPORT_ERRORS as readonly string[]).includes(refused)
          ? t(`letters:export.errors.${refused}`, values)
          : null,
  };
}

/** The text for the practice software, shown in the dialog to copy; the files come from the download route. */
export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const key = params["*"] ?? "";
  // Whose letter it is, before anything the form says.
  const letter = await exportedLetter({ userId: user.id, key }).catch(hideLetter);
  const form = await request.formData();
  const values = exportFormValues(form);
  const t = await getFixedTFor(await getLanguage(request), ["common", "letters"]);
  const asked = form.get("format");
  try {
    if (exportFormatFrom(asked) !== "text")
      throw new DomainError("invalid", "letters:export.errors.format", [], { formats: "text" });
    const details = readExportDetails(values);
    const file = await exportLetter({ userId: user.id, letter, format: "text", details, keep: values.keep });
    await auditLetter(request, user.id, "letter.export.text", letter.key);
    return json({ text: String(file.body), values, error: null });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (asked === "text") await auditLetter(request, user.id, "letter.export.text", letter.key, "failure");
    const status = error.kind === "conflict" ? 409 : 400;
    return json({ text: null, values, error: t(error.message, error.values) }, { status });
  }
}

/**
 * The ways out, in the order a practice needs them: files from the download route, the text shown here, the print
 * view as a page of its own (a new tab, so the dialog stays).
 */
const FORMAT_BUTTONS: Array<{ format: ExportFormat; to: "download" | "dialog" | "print"; target?: "_blank" }> = [
  { format: "pdf", to: "download" },
  { format: "docx", to: "download" },
  { format: "text", to: "dialog" },
  { format: "print", to: "print", target: "_blank" },
  { format: "fhir", to: "download" },
];

const field = "mt-1 block w-full rounded-md border border-slate-300 px-3 py-2 text-base";

export default function ExportDialog() {
  const data = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("letters");
  const shown = result?.values ?? {
    ...data.details,
    patientBirthDate: data.details.patientBirthDate ?? "",
    keep: data.kept,
  };
  const error = result?.error ?? data.refused;
  // One input per line of the DIN 5008 address zone: the form cannot send a fifth.
  const lines = Array.from({ length: EXPORT_LIMITS.addressLines }, (_, i) => shown.recipientAddress[i] ?? "");
  return (
    <Modal title={t("export.title", { name: data.name })} closeTo={editorUrl(data.key)} closeLabel={t("export.close")}>
      <div className="space-y-4" data-export-dialog>
        <p className="text-sm text-slate-600">{t("export.intro")}</p>
        {error ? (
          <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800" data-error>
            {error}
          </p>
        ) : null}
        {data.busy ? (
          <p role="status" className="rounded border border-sky-300 bg-sky-50 px-3 py-2 text-sm text-sky-900">
            {t("errors.busy")}
          </p>
        ) : null}
        {result?.text ? (
          <section className="space-y-2 rounded-md border border-emerald-300 bg-emerald-50 p-3" data-pvs-text>
            <div className="flex items-center justify-between gap-2">
              <h3 className="text-sm font-semibold text-slate-800">{t("export.textTitle")}</h3>
              <button
                type="button"
                className={quiet}
                hidden
                data-action="copy"
                data-copy-target="pvs-text"
                data-copied-label={t("editor.copied")}
              >
                {t("export.copy")}
              </button>
            </div>
            <p className="text-xs text-slate-600">{t("export.textHelp")}</p>
            <textarea
              id="pvs-text"
              readOnly
              rows={12}
              className="w-full rounded border border-slate-300 bg-white p-2 font-mono text-xs"
              defaultValue={result.text}
              key={result.text}
            />
          </section>
        ) : null}
        <Form method="post" reloadDocument className="space-y-4" data-export-form>
          <fieldset className="grid gap-3 sm:grid-cols-2">
            <legend className="mb-1 text-sm font-semibold text-slate-800">{t("export.recipient")}</legend>
            <label className="block text-sm text-slate-700 sm:col-span-2">
              {t("export.recipientName")}
              <input
                name="recipient_name"
                maxLength={EXPORT_LIMITS.name}
                autoComplete="off"
                defaultValue={shown.recipientName}
                className={field}
              />
            </label>
            <fieldset className="sm:col-span-2" aria-describedby="recipient-address-help">
              <legend className="text-sm text-slate-700">{t("export.recipientAddress")}</legend>
              {lines.map((line, i) => (
                <input
                  key={i}
                  name="recipient_address"
                  maxLength={EXPORT_LIMITS.addressLine}
                  autoComplete="off"
                  aria-label={t("export.addressLine", { n: i + 1 })}
                  defaultValue={line}
                  className={field}
                />
              ))}
              <span id="recipient-address-help" className="mt-1 block text-xs text-slate-500">
                {t("export.recipientAddressHelp", { lines: EXPORT_LIMITS.addressLines })}
              </span>
            </fieldset>
          </fieldset>
          <fieldset className="grid gap-3 sm:grid-cols-2">
            <legend className="mb-1 text-sm font-semibold text-slate-800">{t("export.letterLine")}</legend>
            <label className="block text-sm text-slate-700">
              {t("export.patientName")}
              <input
                name="patient_name"
                maxLength={EXPORT_LIMITS.name}
                autoComplete="off"
                defaultValue={shown.patientName}
                className={field}
              />
            </label>
            <label className="block text-sm text-slate-700">
              {t("export.patientBirthDate")}
              <input
                type="date"
                name="patient_birth_date"
                min="1900-01-01"
                max={data.today}
                defaultValue={shown.patientBirthDate}
                className={field}
              />
            </label>
            <label className="block text-sm text-slate-700">
              {t("export.subject")}
              <input
                name="subject"
                maxLength={EXPORT_LIMITS.subject}
                placeholder={t("export.defaultSubject")}
                defaultValue={shown.subject}
                className={field}
              />
            </label>
            <label className="block text-sm text-slate-700">
              {t("export.date")}
              <input type="date" name="date" min="1900-01-01" defaultValue={shown.date} className={field} />
            </label>
          </fieldset>
          <label className="flex items-start gap-2 text-sm">
            <input type="checkbox" name="keep" value="yes" defaultChecked={shown.keep} className="mt-1" />
            <span>
              {t("export.keep")}
              <span className="block text-xs text-slate-500">{t("export.keepHelp")}</span>
            </span>
          </label>
          {data.busy ? null : (
            <div className="flex flex-wrap gap-2" data-export-formats>
              {FORMAT_BUTTONS.map(({ format, to, target }) => (
                <button
                  key={format}
                  type="submit"
                  name="format"
                  value={format}
                  formAction={
                    to === "download" ? downloadUrl(data.key) : to === "print" ? printUrl(data.key) : undefined
                  }
                  formTarget={target}
                  className={format === "pdf" ? button : quiet}
                  data-format={format}
                >
                  {t(`export.formats.${format}`)}
                </button>
              ))}
            </div>
          )}
        </Form>
        <p className="text-xs text-slate-500">
          <a href={exportUrl(data.key)} className="underline">
            {t("export.reset")}
          </a>
        </p>
      </div>
    </Modal>
  );
}
