import { apiJson, apiPost, ApiError } from "~/services/web/api.server";
import { auditAccess } from "~/services/audit/events.server";
import { getConfig } from "~/services/config/config.server";
import { LiveEngineError } from "~/services/live/engine-types";
import { createRealtimeToken } from "~/services/live/speechmatics-token.server";
import { statusFor } from "~/services/web/domain-error.server";
import { hitRateLimit } from "~/services/web/rate-limit.server";

// SPEC §7 POST /api/{speech_provider}-jwt → { jwt }: a temporary Speechmatics realtime key (≤ 60 s) for the
// direct mode, where the browser opens the provider's socket itself (ADR 0013). The long-lived key stays on
// the server; neither key is logged or audited.
const TOKENS_PER_MINUTE = 20;

export const action = apiPost(
  async ({ request, user }) => {
    const limit = await hitRateLimit({
      bucket: `speech-jwt:${user.id}`,
      limit: TOKENS_PER_MINUTE,
      windowSeconds: 60,
      userId: user.id,
    });
    if (!limit.allowed) throw new ApiError(429, "Too many requests");
    const speechmatics = getConfig().speech.speechmatics;
    if (!speechmatics.apiKey)
      throw new ApiError(statusFor("service_down"), "Live speech recognition is not configured");
    try {
      const token = await createRealtimeToken({
        apiKey: speechmatics.apiKey,
        managementUrl: speechmatics.managementUrl,
      });
      await auditAccess(request, user.id, "speech.token", "success");
      return apiJson({ jwt: token.jwt }, { headers: { "Cache-Control": "no-store" } });
    } catch (error) {
      await auditAccess(request, user.id, "speech.token", "failure");
      if (error instanceof LiveEngineError)
        throw new ApiError(statusFor("unavailable"), "Failed to authenticate with transcription service");
      throw error;
    }
  },
  { body: false },
);
