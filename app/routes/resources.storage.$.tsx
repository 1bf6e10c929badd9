// Serves the local object store's signed URLs, so the browser uploads and downloads exactly as it would
// against S3 presigned URLs. With S3 configured this route does not exist (404).
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";

import { parseRangeHeader, toWebStream } from "~/services/storage/http.server";
import { isLocalStorage, type LocalObjectStorage } from "~/services/storage/local.server";
import { auditForgedSignature } from "~/services/audit/not-found-audit.server";
import { INVALID_SIGNATURE_DETAIL } from "~/services/storage/local-signing.server";
import { discardOversizeSlot } from "~/services/recordings/recordings.server";
import { InvalidStorageKeyError, assertWellFormedKey, getStorage } from "~/services/storage/storage.server";

const NO_STORE = "private, no-store";

function problem(status: number, detail: string, headers?: Record<string, string>) {
  return json({ detail }, { status, headers: { "Cache-Control": NO_STORE, ...headers } });
}

/** The local store and a well-formed key, or the error response to send instead. */
function resolveTarget(params: LoaderFunctionArgs["params"]): { storage: LocalObjectStorage; key: string } | Response {
  const storage = getStorage();
  if (!isLocalStorage(storage)) return problem(404, "Not found");
  const key = params["*"] ?? "";
  try {
    assertWellFormedKey(key);
  } catch (error) {
    if (error instanceof InvalidStorageKeyError) return problem(404, "Not found");
    throw error;
  }
  return { storage, key };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const target = resolveTarget(params);
  if (target instanceof Response) return target;
  const { storage, key } = target;

  const verdict = storage.verifyRequest({
    method: "GET",
    key,
    searchParams: new URL(request.url).searchParams,
  });
  if (!verdict.ok) {
    // A forged or altered URL is audited (ASVS 16.3.2); the refusal stands whether or not the row could be written.
    if (verdict.detail === INVALID_SIGNATURE_DETAIL) await auditForgedSignature(request, key).catch(() => undefined);
    return problem(403, verdict.detail);
  }

  const info = await storage.head(key);
  if (!info) return problem(404, "Not found");

  const range = parseRangeHeader(request.headers.get("Range"), info.size);
  if (range === "unsatisfiable") {
    return problem(416, "Range not satisfiable", { "Content-Range": `bytes */${info.size}` });
  }

  const headers = new Headers({
    "Content-Type": verdict.contentType ?? info.contentType ?? "application/octet-stream",
    "Content-Length": String(range ? range.end - range.start + 1 : info.size),
    "Accept-Ranges": "bytes",
    "Cache-Control": NO_STORE,
    // The store shares the app's origin: never let a stored file be sniffed or run as a page.
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
  });
  if (info.etag) headers.set("ETag", info.etag);
  if (range) headers.set("Content-Range", `bytes ${range.start}-${range.end}/${info.size}`);

  const status = range ? 206 : 200;
  // Remix drops the body of a HEAD response; opening the file for it would only leak a handle.
  if (request.method === "HEAD") return new Response(null, { status, headers });

  const stream = await storage.getStream(key, range ? { range } : undefined);
  if (!stream) return problem(404, "Not found");
  return new Response(toWebStream(stream), { status, headers });
}

export async function action({ request, params }: ActionFunctionArgs) {
  const target = resolveTarget(params);
  if (target instanceof Response) return target;
  const { storage, key } = target;

  if (request.method !== "PUT") return problem(405, "Method not allowed", { Allow: "PUT" });

  const verdict = storage.verifyRequest({
    method: "PUT",
    key,
    searchParams: new URL(request.url).searchParams,
  });
  if (!verdict.ok) {
    // A forged or altered URL is audited (ASVS 16.3.2); the refusal stands whether or not the row could be written.
    if (verdict.detail === INVALID_SIGNATURE_DETAIL) await auditForgedSignature(request, key).catch(() => undefined);
    return problem(403, verdict.detail);
  }

  // A whole upload over the limit can never become a recording: its slot goes with the refusal (nothing half-stored).
  const tooLarge = async () => {
    // The refusal stands whether or not the slot could go (the daily sweep is the backstop).
    if (!verdict.part)
      await discardOversizeSlot(key).catch((error: unknown) =>
        console.warn("[storage] could not remove the slot of a refused upload:", String(error)),
      );
    return problem(413, "Upload too large");
  };
  const declaredLength = request.headers.get("Content-Length");
  if (declaredLength !== null && Number(declaredLength) > storage.maxUploadBytes) return tooLarge();
  const body = request.body ?? new Uint8Array(0);

  if (verdict.part) {
    // One part of a multipart upload (S3 UploadPart): no Content-Type, the upload's own type applies.
    const part = await storage.writePart({ key, ...verdict.part, body, maxBytes: storage.maxUploadBytes });
    if (!part.ok && part.reason === "no_such_upload") return problem(404, "No such upload");
    if (!part.ok) return problem(413, "Upload too large");
    return new Response(null, { status: 200, headers: { ETag: part.etag, "Cache-Control": NO_STORE } });
  }

  // Like S3 with a signed Content-Type: the upload must declare exactly the type the server allowed.
  if (verdict.contentType === undefined || request.headers.get("Content-Type") !== verdict.contentType) {
    return problem(403, "Content-Type does not match the signed upload URL");
  }

  const result = await storage.write({
    key,
    contentType: verdict.contentType,
    // S3 accepts empty objects too; whether an empty file is acceptable is the caller's rule, not storage's.
    body,
    maxBytes: storage.maxUploadBytes,
  });
  if (!result.ok) return tooLarge();

  return new Response(null, { status: 200, headers: { ETag: result.etag, "Cache-Control": NO_STORE } });
}
