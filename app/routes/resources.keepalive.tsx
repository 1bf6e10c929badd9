import type { ActionFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";

// "An upload or a live stream in progress counts as activity" (issue 2): the
// upload progress and the live recorder post here while they work, so a long
// transfer never ends in an expired session. Answers how long the session lasts.
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  await requireApiUser(request);
  return apiJson({ ok: true });
});

export function loader() {
  return new Response(null, { status: 405, headers: { Allow: "POST" } });
}
