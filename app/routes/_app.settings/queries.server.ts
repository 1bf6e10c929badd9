import { parseWithZod } from "@conform-to/zod";
import { json } from "@remix-run/node";
import { setRagAgreed } from "~/models/template.server";
import { structureInputSchema, type TemplateLanguage } from "~/models/template-rules";
import { auditAccount, auditTemplate } from "~/services/audit/events.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import type { SessionUser } from "~/services/web/session.server";
import { resetUserStructure, saveUserStructure } from "~/services/templates/templates.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { meterCall } from "~/services/admin/usage.server";
import { settingsUrl } from "./urls";

// The Settings page's form intents (STYLE.md §7): one small function each.
// An unexpected failure becomes the SPEC §8 message; nothing saved is lost.

type FailureKey = "templates:errors.saveStructure" | "templates:errors.resetStructure" | "templates:errors.ragSettings";

/** Runs an intent; an unexpected failure (not a redirect, not a rule) becomes its SPEC §8 toast. */
export async function withFailureMessage<T>(
  key: FailureKey,
  language: TemplateLanguage,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof Response) throw error;
    // Another user's or an unknown template is a 404 (never a 500), like every other owned id (issue 9).
    if (error instanceof DomainError && error.kind !== "invalid") {
      throw new Response(error.kind === "not_found" ? "Not found" : error.message, { status: statusFor(error.kind) });
    }
    console.warn(`[settings] ${key}:`, error instanceof Error ? error.message : error);
    throw await redirectWithToast(settingsUrl(language), { type: "error", key });
  }
}

export async function saveStructureIntent(
  user: SessionUser,
  templateId: string,
  form: FormData,
  language: TemplateLanguage,
  request: Request,
) {
  const submission = parseWithZod(form, { schema: structureInputSchema });
  // List intents (add, remove, move) and failed checks come back as a draft.
  if (submission.status !== "success") {
    return json({ templateId, result: submission.reply() }, { status: submission.status === "error" ? 400 : 200 });
  }
  meterCall(user.id, "structure/user");
  try {
    await saveUserStructure({ userId: user.id, templateId, language, ...submission.value });
  } catch (error) {
    if (error instanceof DomainError && error.kind === "invalid") {
      const fieldErrors = Object.fromEntries(
        error.issues.map((issue) => [
          issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i ? `.${p}` : p)).join(""),
          [issue.message],
        ]),
      );
      return json(
        {
          templateId,
          result: submission.reply({ formErrors: error.issues.length ? [] : [error.message], fieldErrors }),
        },
        { status: 400 },
      );
    }
    throw error;
  }
  return templateChanged(user, request, { templateId, language, action: "save" });
}

/** After a structure was saved or reset: the audit row, then back to the open card with its message. */
export async function templateChanged(
  user: SessionUser,
  request: Request,
  args: { templateId: string; language: TemplateLanguage; action: "save" | "reset" },
): Promise<never> {
  await auditTemplate(request, user.id, `template.structure.${args.action}`, args.templateId);
  const key = args.action === "save" ? "templates:toast.structureSaved" : "templates:toast.structureReset";
  throw await redirectWithToast(settingsUrl(args.language, args.templateId), { type: "success", key });
}

export async function resetIntent(user: SessionUser, templateId: string, language: TemplateLanguage, request: Request) {
  meterCall(user.id, "structure/user/reset");
  await resetUserStructure({ userId: user.id, templateId, language });
  return templateChanged(user, request, { templateId, language, action: "reset" });
}

export async function ragIntent(user: SessionUser, agreed: boolean, language: TemplateLanguage, request: Request) {
  meterCall(user.id, "structure/user/rag-permission");
  await setRagAgreed({ userId: user.id, agreed });
  await auditAccount(request, user.id, agreed ? "consent.rag.grant" : "consent.rag.withdraw", user.id);
  throw await redirectWithToast(`${settingsUrl(language)}#ai-learning`, {
    type: "success",
    key: agreed ? "templates:toast.ragOn" : "templates:toast.ragOff",
  });
}
