import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute } from "~/services/web/api.server";
import { requireApiAdmin } from "~/services/admin/admin.server";
import { healthReport } from "~/services/admin/health.server";

// SPEC §7 GET /api/health — only for the operator's admins (decided on the
// server from the verified identity); everyone else learns nothing about services.
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  await requireApiAdmin(request, "admin.health");
  return apiJson(await healthReport());
});
