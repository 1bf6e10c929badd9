import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { sessionAction, sessionLoader } from "~/services/live/transport-http.server";
import { saveSessionRoute } from "~/services/live/save-session.server";
import { withNotFoundAudit } from "~/services/audit/not-found-audit.server";

// The HTTP door of a live session (ADR 0013, app/live/protocol.ts): GET <id>, GET <id>/events,
// POST <id>/start|audio|end|discard|save. Another user's session is a 404, audited (ASVS 16.3.2).
export const loader = ({ request, params }: LoaderFunctionArgs) =>
  withNotFoundAudit(request, () => sessionLoader(request, params["*"] ?? ""));

export const action = ({ request, params }: ActionFunctionArgs) => {
  const path = params["*"] ?? "";
  return withNotFoundAudit(request, () =>
    path.endsWith("/save") ? saveSessionRoute(request, path.slice(0, -"/save".length)) : sessionAction(request, path),
  );
};
