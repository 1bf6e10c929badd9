import type { LoaderFunctionArgs } from "@remix-run/node";
import { getRagAgreed, setRagAgreed } from "~/models/template.server";
import { ApiError, apiJson, apiPost, apiRoute, requireApiUser } from "~/services/web/api.server";
import { auditAccount } from "~/services/audit/events.server";

// SPEC §7 GET/POST /api/structure/user/rag-permission — the user's data-use consent.
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  return apiJson({ rag_agreed: await getRagAgreed({ userId: user.id }) });
});

export const action = apiPost(async ({ request, user, body }) => {
  if (typeof body.rag_agreed !== "boolean") throw new ApiError(400, "rag_agreed must be true or false");
  await setRagAgreed({ userId: user.id, agreed: body.rag_agreed });
  await auditAccount(request, user.id, body.rag_agreed ? "consent.rag.grant" : "consent.rag.withdraw", user.id);
  return apiJson({ success: true, rag_agreed: body.rag_agreed });
});
