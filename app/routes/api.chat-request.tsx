import { apiJson, apiPost } from "~/services/web/api.server";
import { auditChat } from "~/services/audit/events.server";
import { answerChatRequest } from "~/services/chat/chat-api.server";

// SPEC §7 POST /api/chat-request { messages, language } → { message }: stateless, nothing is stored
// (app/services/chat/chat-api.server.ts). A failed answer is SPEC §8's apology with status 502.
export const action = apiPost(async ({ request, user, body }) => {
  try {
    const result = await answerChatRequest({ userId: user.id, body });
    await auditChat(request, user.id, "chat.request");
    return apiJson(result);
  } catch (error) {
    await auditChat(request, user.id, "chat.request", "failure");
    throw error;
  }
});
