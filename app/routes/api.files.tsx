import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { listFiles } from "~/services/recordings/recordings.server";

// SPEC §7 GET /api/files → the user's audio file records (SPEC §3).
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const files = await listFiles({ userId: user.id });
  await audit({ userId: user.id, action: "recording.list", entityType: "recording", outcome: "success", request });
  return apiJson({ files });
});
