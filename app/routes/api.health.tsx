import type { LoaderFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, requireApiUser } from "~/services/api.server";
import { audit } from "~/services/audit.server";
import { isOperator } from "~/services/auth.server";
import { healthReport } from "~/services/health.server";

// SPEC §7 GET /api/health — only for the operator's admins (decided on the
// server from the verified identity); everyone else learns nothing about services.
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  if (!isOperator(user)) {
    await audit({ userId: user.id, action: "admin.health", outcome: "denied", request });
    throw new ApiError(403, "Access denied - unauthorized domain");
  }
  return apiJson(await healthReport());
});
