import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { listFiles } from "~/services/recordings/recordings.server";

// SPEC §7 GET /api/files → the user's audio file records (SPEC §3).
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const files = await listFiles({ userId: user.id });
  await auditRecording(request, user.id, "recording.list");
  return apiJson({ files });
});
