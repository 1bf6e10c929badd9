import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import { listLetters } from "~/services/letters/editing.server";

// SPEC §7 GET /api/arztbriefe → the owner's letters (no content: that is GET /api/arztbrief/{key}).
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const arztbriefe = await listLetters({ userId: user.id });
  await auditLetter(request, user.id, "letter.list");
  return apiJson({ arztbriefe });
});
