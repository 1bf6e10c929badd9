import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { getPlaybackUrl } from "~/services/recordings/playback.server";

// SPEC §7 GET /api/audio-playback/{key} → { playback_url } (short-lived).
export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const key = params["*"] ?? "";
  const playback_url = await getPlaybackUrl({ userId: user.id, key });
  await auditRecording(request, user.id, "recording.play", key);
  return apiJson({ playback_url });
});
