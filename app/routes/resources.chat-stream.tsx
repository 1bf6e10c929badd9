import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiErrorResponse, requireApiUser } from "~/services/web/api.server";
import { streamChatAnswer } from "~/services/chat/chat-stream.server";
import { getLanguage } from "~/services/web/i18n.server";

// POST /resources/chat-stream: the chat screen's send with the answer streamed as server-sent events
// (app/services/chat/chat-stream.server.ts). The page's script posts the question form here; without
// JavaScript the same form posts to /chat.
export async function action({ request }: ActionFunctionArgs) {
  try {
    const user = await requireApiUser(request);
    return await streamChatAnswer({ request, userId: user.id, language: await getLanguage(request) });
  } catch (error) {
    if (error instanceof ApiError) return apiErrorResponse(error.status, error.detail, error.headers);
    throw error;
  }
}

export function loader() {
  return apiErrorResponse(405, "Method not allowed");
}
