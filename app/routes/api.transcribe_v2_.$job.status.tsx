import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { transcriptionStatus } from "~/services/transcription/transcription.server";

// SPEC §7 GET /api/transcribe_v2/{job}/status → { job_name, status (SPEC §4), s3_key, transcript_key, error }.
export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  return apiJson(await transcriptionStatus({ userId: user.id, jobName: params.job }));
});
