import { redirect, type ActionFunctionArgs } from "@remix-run/node";
import { auditLetter } from "~/services/audit/events.server";
import {
  attachmentDisposition,
  exportFileName,
  exportFormatFrom,
  exportLetter,
  exportedLetter,
  readExportDetails,
} from "~/services/letters/export.server";
import { DomainError } from "~/services/web/domain-error.server";
import { hideAsNotFound } from "~/services/web/not-found.server";
import { requireUser } from "~/services/web/session.server";
import { exportFormValues } from "./_app.arztbriefe.$/export-form";
import { exportUrl } from "./_app.arztbriefe.$/paths";

// The export dialog's file buttons (issue 25, ADR 0037): the letter as a DIN 5008 PDF, a DOCX or a FHIR document, as
// the download the POST answers — a resource route, because a page's action cannot answer a file to a browser's
// form. A refusal goes back to the dialog by name (`?error=` with its non-personal values); what was typed is not
// put into the address. Owner-scoped, audited by format without content.

/** The refusal's name and values (field names, limits) for the dialog to say; never what was typed. */
function backToDialog(key: string, error: DomainError) {
  const query = new URLSearchParams({ error: error.message.replace(/^letters:export\.errors\./, "") });
  for (const name of ["field", "max", "formats"]) if (error.values[name]) query.set(name, error.values[name]!);
  if (error.message === "letters:errors.busy") query.set("error", "busy");
  return redirect(`${exportUrl(key)}?${query}`, 303);
}

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const key = params["*"] ?? "";
  // Whose letter it is, before anything the form says: another user's, a made-up key or one without a language is
  // the one page 404.
  const letter = await exportedLetter({ userId: user.id, key }).catch((error: unknown) =>
    hideAsNotFound(error, { kinds: ["invalid"] }),
  );
  const form = await request.formData();
  const values = exportFormValues(form);
  let format: ReturnType<typeof exportFormatFrom> | null = null;
  try {
    format = exportFormatFrom(form.get("format"));
    if (format === "print" || format === "text")
      throw new DomainError("invalid", "letters:export.errors.format", [], { formats: "pdf, docx, fhir" });
    const details = readExportDetails(values);
    const file = await exportLetter({ userId: user.id, letter, format, details, keep: values.keep });
    await auditLetter(request, user.id, `letter.export.${format}`, letter.key);
    return new Response(typeof file.body === "string" ? file.body : Buffer.from(file.body), {
      headers: {
        "Content-Type": file.contentType,
        "Content-Disposition": attachmentDisposition(exportFileName(letter.filename, details.date, file.extension)),
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
      },
    });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (format && format !== "print" && format !== "text")
      await auditLetter(request, user.id, `letter.export.${format}`, letter.key, "failure");
    return backToDialog(key, error);
  }
}
