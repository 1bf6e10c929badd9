import { z } from "zod";
import { firstOf, intentForms } from "~/components/forms/fields";

// Settings › "Aktive Sitzungen" (_app.settings.sessions.tsx, issue 23): end one other session, named by its public
// id, or all others.

export const INTENT = { end: "end", endOthers: "end-others" } as const;

export const sessionsActionSchema = intentForms([
  z.object({ intent: z.literal(INTENT.end), session: firstOf(z.string().min(1).max(100)) }),
  z.object({ intent: z.literal(INTENT.endOthers) }),
]);
