import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { requiredText } from "~/services/web/api-fields.server";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/web/api.server";
import { auditPrompt } from "~/services/audit/events.server";
import { listPrompts, promptTextFrom, promptTitleFrom, savePrompt } from "~/services/letters/saved-prompts.server";

// SPEC §7 GET /api/prompts → { prompts }; POST /api/prompts { title, prompt_text } (at most 3 per user).
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  return apiJson({ prompts: await listPrompts({ userId: user.id }) });
});

export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const body = await readJsonBody(request);
  // The title is refused before the text, as it always was.
  const title = promptTitleFrom(requiredText(body, "title", "letters:prompts.titleRequired"));
  const promptText = promptTextFrom(requiredText(body, "prompt_text", "letters:prompts.textRequired"));
  const prompt = await savePrompt({ userId: user.id, title, promptText });
  await auditPrompt(request, user.id, "prompt.save", prompt.id);
  return apiJson({ success: true, prompt }, { status: 201 });
});
