import type { LoaderFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute } from "~/services/web/api.server";
import { requireApiAdmin } from "~/services/admin/admin.server";
import { periodFrom } from "~/services/admin/period.server";
import { usageByUser } from "~/services/admin/usage.server";

// SPEC §7 GET /api/usage-dashboard → per-user usage (SPEC §3 "Usage dashboard user": name, email, is_org,
// endpoints, costs with total), for the operator's admins only. The period is optional query parameters:
// period=today|7d|30d (default 30d) or period=custom&from=YYYY-MM-DD&to=YYYY-MM-DD (Europe/Berlin days, included).
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  await requireApiAdmin(request, "admin.usage");
  const period = periodFrom(new URL(request.url).searchParams, "30d");
  if (period.invalid) throw new ApiError(400, "Invalid period");
  const users = await usageByUser(period.range);
  return apiJson({ period: { name: period.kind, from: period.from, to: period.to }, users });
});
