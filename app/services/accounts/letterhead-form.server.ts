import {
  MaxPartSizeExceededError,
  unstable_createMemoryUploadHandler,
  unstable_parseMultipartFormData,
  type UploadHandler,
} from "@remix-run/node";
import { LETTERHEAD_LIMITS } from "~/components/letterhead/schema";
import { DomainError } from "../web/domain-error.server";
import { isMalformedMultipart } from "../web/multipart-form.server";

// The letterhead form as the two letterhead pages read it (issue 25): its text fields, and the logo's bytes when a
// file was chosen. The save form is multipart (it carries the logo); "remove logo" and "remove" are plain forms. A
// logo over the limit does not end the parse: its bytes are read and dropped, so the typed fields come back with the
// refusal instead of being lost. A request far past any logo (or a text field past any form's) is refused whole.

const TEXT_PART_MAX = 16 * 1024;
const DRAIN_MAX = 16 * 1024 * 1024;

export type LetterheadForm = {
  /** The text fields only: what the form's schema parses, and what goes back to the page when it is refused. */
  fields: FormData;
  /** The chosen logo's bytes (null: no file chosen), or "tooLarge" when it was over the limit. */
  logo: Uint8Array | "tooLarge" | null;
};

export async function readLetterheadForm(request: Request): Promise<LetterheadForm> {
  const type = request.headers.get("Content-Type") ?? "";
  if (!type.startsWith("multipart/form-data")) return { fields: await request.formData(), logo: null };
  let logo: LetterheadForm["logo"] = null;
  const text = unstable_createMemoryUploadHandler({ maxPartSize: TEXT_PART_MAX });
  const handler: UploadHandler = async (part) => {
    if (part.filename === undefined) return text(part);
    // An empty file input still sends a part, with no file name; other files are not this form's.
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of part.data) {
      size += chunk.byteLength;
      if (size > DRAIN_MAX) throw new DomainError("invalid", "account:letterhead.errors.logo.tooLarge");
      if (size <= LETTERHEAD_LIMITS.logoBytes) chunks.push(chunk);
    }
    if (part.name !== "logo" || !part.filename || size === 0) return undefined;
    logo = size > LETTERHEAD_LIMITS.logoBytes ? "tooLarge" : concat(chunks, size);
    return undefined;
  };
  try {
    const fields = await unstable_parseMultipartFormData(request, handler);
    return { fields, logo };
  } catch (error) {
    if (error instanceof MaxPartSizeExceededError) throw new DomainError("invalid", "account:letterhead.errors.form");
    if (isMalformedMultipart(error)) throw new DomainError("invalid", "account:letterhead.errors.logo.fileName");
    throw error;
  }
}

function concat(chunks: Uint8Array[], size: number) {
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}
