import {
  DEFAULT_MAX_BYTES_PER_DOCUMENT,
  DEFAULT_MAX_DOCUMENTS,
  DEFAULT_TIMEOUT_MS,
  PatientRecordError,
  assertPatientId,
  type PatientDocument,
  type PatientRecordSource,
  type PatientRecordsConfig,
} from "./contract.server";

import {
  createMFilesHttp,
  discard,
  failure,
  readBody,
  readJson,
  restRootOf,
  startCall,
  type Call,
} from "./mfiles-http.server";
import {
  DOCUMENT_OBJECT_TYPE,
  displayName,
  isPdfFile,
  isRecord,
  parseFiles,
  parseObject,
  type ObjectRef,
} from "./mfiles-objects.server";
import { createMFilesSessions, isAuthFailure } from "./mfiles-session.server";

// The M-Files Web Service (MFWS, "REST API") adapter, written against PROTOCOLS.md §4:
// - POST /REST/server/authenticationtokens answers 200 with a token even for wrong credentials; the
//   failure shows as 403 on first use. So a 401/403 on a token just issued that has not worked yet
//   means the credentials are wrong (`unauthorized`, no second login that could count towards an
//   account lock-out); on a cached token, or one that worked before, it means "expired or unusable":
//   log in again once per call and retry once.
// - Cookies of the token reply (Multi-Server Mode's `mfilesmsm`) are sent back on every later call.
// - GET /REST/objects?o=0&p<property>=<patient id> finds the documents; deleted ones are excluded by
//   the server; ObjVer gives type, id and version; .../files lists files; .../files/<id>/content streams
//   the bytes. Only files with extension "pdf" whose first bytes are "%PDF-" are returned.
// - One time-out covers the whole call (login, search, listings, downloads). No redirect is followed
//   (redirect: "manual", any 3xx is `unavailable`) and no URL outside the configured origin is called,
//   so the X-Authentication header never leaves the configured host.
// - A document over maxBytesPerDocument is skipped (Content-Length or streamed count, the download is
//   cancelled at the limit) and the others are still returned; only when every PDF was too large does
//   the call fail with `too_large`. Credentials, tokens and document content are never logged.
//
// The pieces: patient-records/mfiles-http.server.ts (time-out, origin, redirect and byte-limit guards),
// patient-records/mfiles-session.server.ts (login, token cache, retry) and patient-records/mfiles-objects.server.ts (reply parsing).

type MFilesConfig = Extract<PatientRecordsConfig, { kind: "mfiles" }>;

const GUID = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i;

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`M-Files ${name} must be a positive integer`);
  return value;
}

export function createMFilesPatientRecordSource(config: MFilesConfig): PatientRecordSource {
  const configured = Boolean(config.baseUrl?.trim() && config.vaultGuid?.trim() && config.username?.trim());
  const timeoutMs = positiveInteger(config.timeoutMs, DEFAULT_TIMEOUT_MS, "timeoutMs");
  const maxDocuments = positiveInteger(config.maxDocuments, DEFAULT_MAX_DOCUMENTS, "maxDocuments");
  const maxBytes = positiveInteger(config.maxBytesPerDocument, DEFAULT_MAX_BYTES_PER_DOCUMENT, "maxBytesPerDocument");

  let restRoot: URL | null = null;
  let vaultGuid = "";
  if (configured) {
    restRoot = restRootOf(config.baseUrl);
    const guid = GUID.exec(config.vaultGuid.trim());
    if (!guid) throw new Error("M-Files vault GUID must look like {C840BE1A-5B47-4AC0-8EF7-835C166C8E24}");
    vaultGuid = `{${guid[1]}}`; // the documented form, with braces
    positiveInteger(config.patientIdPropertyId, 1, "patientIdPropertyId");
  }

  const { endpoint, send } = createMFilesHttp(restRoot);
  const { authenticate, forget, authorizedGet } = createMFilesSessions({ endpoint, send }, config, vaultGuid);

  async function search(call: Call, patientId: string): Promise<ObjectRef[]> {
    const query = `o=${DOCUMENT_OBJECT_TYPE}&p${config.patientIdPropertyId}=${encodeURIComponent(patientId)}`;
    const response = await authorizedGet(call, endpoint("/objects", query));
    if (!response.ok) {
      discard(response);
      throw new PatientRecordError("unavailable", `M-Files search failed (HTTP ${response.status})`);
    }
    const reply = await readJson(response);
    const items = isRecord(reply) && Array.isArray(reply.Items) ? reply.Items : null;
    if (!items) throw new PatientRecordError("unavailable", "M-Files search reply has no Items");
    // Newest first, so the limit keeps the most recent documents.
    return items
      .map(parseObject)
      .filter((o): o is ObjectRef => o !== null)
      .sort((a, b) => b.modified - a.modified);
  }

  async function fetchDocuments(patientId: string, call: Call): Promise<PatientDocument[]> {
    const documents: PatientDocument[] = [];
    let tooLarge = 0;
    for (const object of await search(call, patientId)) {
      if (documents.length >= maxDocuments) break;
      // The search result already lists the files; skip objects without a PDF without asking again.
      if (object.files && !object.files.some(isPdfFile)) continue;
      const prefix = `/objects/${object.type}/${object.id}/${object.version}/files`;
      const listing = await authorizedGet(call, endpoint(prefix));
      if (listing.status === 404) {
        discard(listing); // deleted between search and listing
        continue;
      }
      if (!listing.ok) {
        discard(listing);
        throw new PatientRecordError("unavailable", `M-Files file listing failed (HTTP ${listing.status})`);
      }
      for (const file of parseFiles(await readJson(listing)).filter(isPdfFile)) {
        if (documents.length >= maxDocuments) break;
        const content = await authorizedGet(call, endpoint(`${prefix}/${file.id}/content`));
        if (content.status === 404) {
          discard(content);
          continue;
        }
        if (!content.ok) {
          discard(content);
          throw new PatientRecordError("unavailable", `M-Files download failed (HTTP ${content.status})`);
        }
        const body = await readBody(content, maxBytes, true);
        if (body.kind === "too_large") {
          tooLarge++;
          console.warn(
            `patient-records: skipped M-Files file ${object.type}/${object.id}/${file.id}, larger than ${maxBytes} bytes`,
          );
        } else if (body.kind === "ok") {
          documents.push({ name: displayName(file), data: body.data });
        }
      }
    }
    if (documents.length === 0 && tooLarge > 0) throw new PatientRecordError("too_large");
    return documents;
  }

  return {
    kind: "mfiles",

    async fetchDocuments(patientId, options) {
      const id = assertPatientId(patientId);
      if (!configured) throw new PatientRecordError("unavailable", "M-Files is not configured");
      const call = startCall(timeoutMs, options?.signal);
      try {
        return await fetchDocuments(id, call);
      } catch (error) {
        throw failure(call, error);
      } finally {
        call.dispose();
      }
    },

    async check(limitMs = timeoutMs) {
      if (!configured) return { status: "not_configured", detail: "M-Files is not configured" };
      const call = startCall(limitMs);
      try {
        // A token comes back even for wrong credentials, so only a call that uses it proves them.
        const session = await authenticate(call);
        const response = await send(call, endpoint("/session/vault"), { session });
        discard(response);
        if (isAuthFailure(response.status)) {
          forget(session);
          return { status: "error", detail: "M-Files rejected the credentials" };
        }
        if (!response.ok) return { status: "error", detail: `M-Files answered HTTP ${response.status}` };
        return { status: "healthy" };
      } catch (error) {
        const mapped = failure(call, error);
        return { status: "error", detail: mapped instanceof Error ? mapped.message : "M-Files check failed" };
      } finally {
        call.dispose();
      }
    },
  };
}
