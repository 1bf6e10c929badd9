import type { ActionFunctionArgs } from "@remix-run/node";
import { createSessionRoute } from "~/services/live/transport-http.server";

// POST /live/sessions: a new live recording or dictation session (ADR 0013).
export const action = ({ request }: ActionFunctionArgs) => createSessionRoute(request);
