import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { sessionAction, sessionLoader } from "~/services/live/transport-http.server";
import { saveSessionRoute } from "~/services/live/save-session.server";

// The HTTP door of a live session (ADR 0013, app/live/protocol.ts): GET <id>, GET <id>/events,
// POST <id>/start|audio|end|discard|save.
export const loader = ({ request, params }: LoaderFunctionArgs) => sessionLoader(request, params["*"] ?? "");

export const action = ({ request, params }: ActionFunctionArgs) => {
  const path = params["*"] ?? "";
  return path.endsWith("/save")
    ? saveSessionRoute(request, path.slice(0, -"/save".length))
    : sessionAction(request, path);
};
