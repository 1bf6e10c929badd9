import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { getPlaybackUrl } from "~/services/recordings/playback.server";

// SPEC §7 GET /api/audio-playback/{key} → { playback_url } (short-lived).
export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const key = params["*"] ?? "";
  const playback_url = await getPlaybackUrl({ userId: user.id, key });
  await audit({
    userId: user.id,
    action: "recording.play",
    entityType: "recording",
    entityId: key,
    outcome: "success",
    request,
  });
  return apiJson({ playback_url });
});
