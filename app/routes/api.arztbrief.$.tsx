import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import { baseVersionFrom, getLetter, letterContentFrom, saveLetter } from "~/services/letters/editing.server";

// SPEC §7 GET/PUT /api/arztbrief/{key} (with or without the leading "arztbriefe/"). PUT { content } saves a
// new version when the content differs; `base_version` (optional) refuses a save over a newer version (409).
export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const letter = await getLetter({ userId: user.id, key: params["*"] ?? "" });
  await auditLetter(request, user.id, "letter.read", letter.key);
  return apiJson(letter);
});

export const action = apiRoute(async ({ request, params }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "PUT") throw new ApiError(405, "Method not allowed");
  const body = await readJsonBody(request);
  // The content is refused before the key, as it always was.
  const content = letterContentFrom(body.content);
  const result = await saveLetter({
    userId: user.id,
    key: params["*"] ?? "",
    content,
    baseVersion: baseVersionFrom(body.base_version),
  });
  await auditLetter(request, user.id, "letter.save", result.key);
  return apiJson(result);
});
