import type { ActionFunctionArgs } from "@remix-run/node";
import { auditLetter } from "~/services/audit/events.server";
import {
  attachmentDisposition,
  exportFileName,
  exportFormatFrom,
  exportLetter,
  exportedLetter,
  readExportDetails,
} from "~/services/letters/export.server";
import { letterKeyFrom } from "~/services/letters/editing.server";
import { ApiError, apiRoute, readJsonBody, requireApiUser } from "~/services/web/api.server";
import { optionalFlag, optionalObject } from "~/services/web/api-fields.server";
import { applySecurityHeaders } from "~/services/web/security.server";
import { getConfig } from "~/services/config/config.server";
import { DomainError } from "~/services/web/domain-error.server";

// A finished letter as it leaves Skribent, over the JSON API (issue 25), owner-scoped like GET /api/arztbrief/{key}:
//   POST /api/arztbrief-export/{key}  { "format": "pdf" | "docx" | "fhir" | "text",
//        "recipient": { "name", "address_lines": [..] }, "patient": { "name", "birth_date": "yyyy-mm-dd" },
//        "subject", "date": "yyyy-mm-dd", "keep": false }
// answers the file itself (application/pdf, the DOCX type, application/fhir+json with the PDF inside, or
// text/plain), with a file name. Every field but `format` may be left out; `keep` keeps the details with the letter.
// Audited as letter.export.<format>, never with content.

export const action = apiRoute(async ({ request, params }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const key = letterKeyFrom(params["*"] ?? "");
  // Whose letter it is, before anything the body says.
  const letter = await exportedLetter({ userId: user.id, key });
  const body = await readJsonBody(request);
  const format = exportFormatFrom(body.format);
  if (format === "print")
    throw new DomainError("invalid", "letters:export.errors.format", [], { formats: "pdf, docx, fhir, text" });
  const recipient = optionalObject(body, "recipient") ?? {};
  const patient = optionalObject(body, "patient") ?? {};
  const details = readExportDetails({
    recipientName: recipient.name,
    recipientAddress: recipient.address_lines,
    patientName: patient.name,
    patientBirthDate: patient.birth_date,
    subject: body.subject,
    date: body.date,
  });
  const keep = optionalFlag(body, "keep") ?? false;
  const file = await exportLetter({ userId: user.id, letter, format, details, keep }).catch(async (error: unknown) => {
    await auditLetter(request, user.id, `letter.export.${format}`, letter.key, "failure");
    throw error;
  });
  await auditLetter(request, user.id, `letter.export.${format}`, letter.key);
  const name = exportFileName(letter.filename, details.date, file.extension);
  const headers = new Headers({
    "Content-Type": file.contentType,
    "Content-Disposition": attachmentDisposition(name),
    "Cache-Control": "no-store",
  });
  applySecurityHeaders(headers, { appUrl: getConfig().appUrl });
  return new Response(typeof file.body === "string" ? file.body : Buffer.from(file.body), { headers });
});
