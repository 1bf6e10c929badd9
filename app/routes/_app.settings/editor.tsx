import {
  getFormProps,
  getInputProps,
  getTextareaProps,
  useForm,
  type FormMetadata,
  type SubmissionResult,
} from "@conform-to/react";
import { getZodConstraint } from "@conform-to/zod";
import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Icon } from "~/components/shell/icons";
import type { StoredElement } from "~/models/schema";
import {
  DESCRIPTION_WARN_ABOVE,
  MAX_DESCRIPTION,
  MAX_ELEMENTS,
  MAX_PROMPT,
  PROMPT_WARN_ABOVE,
  structureInputSchema,
  type TemplateLanguage,
} from "~/models/template-rules";
import { INTENT } from "./schema";

// The structure editor shared by the template card, the editor dialog and the
// new-template dialog. Every list button (add, move, remove) is a submit that
// the server applies (conform intents), so it works without JavaScript.

const smallButton =
  "rounded border border-slate-300 px-2 py-1 text-xs text-slate-700 hover:bg-slate-50 disabled:opacity-40";

export type EditableTemplate = { id: string; elements: StoredElement[]; prompt: string };

/** `place` keeps form ids unique when a card and the editor dialog are on one page. */
export function useStructureForm(
  template: EditableTemplate,
  draft?: SubmissionResult<string[]>,
  place: "card" | "dialog" = "card",
) {
  const [form] = useForm<StructureFormSchema>({
    id: `structure-${place}-${template.id}`,
    lastResult: draft,
    defaultValue: {
      elements: template.elements.map((e) => ({ id: e.id, name: e.name, description: e.description })),
      prompt: template.prompt,
    },
    constraint: getZodConstraint(structureInputSchema),
    shouldValidate: "onSubmit",
    shouldRevalidate: "onInput",
  });
  return form;
}

/** The editor form of one template; it posts to the current route unless `action` says otherwise. */
export function StructureEditor({
  form,
  template,
  language,
  action,
}: {
  form: FormMetadata<StructureFormSchema, string[]>;
  template: EditableTemplate;
  language: TemplateLanguage;
  action?: string;
}) {
  const { t } = useTranslation("templates");
  const protectedIds = new Set(template.elements.filter((e) => e.isProtected).map((e) => e.id));
  return (
    <Form
      method="post"
      action={action}
      {...getFormProps(form)}
      noValidate
      className="space-y-3"
      data-structure-editor
      data-char-message={t("errors.characterNotAllowed")}
    >
      <input type="hidden" name="intent" value={INTENT.structure} />
      <input type="hidden" name="templateId" value={template.id} />
      <input type="hidden" name="language" value={language} />
      {form.errors?.length ? (
        <p className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800" role="alert">
          {form.errors.map((e) => t(e)).join(" ")}
        </p>
      ) : null}
      <StructureFields
        form={form}
        protectedIds={protectedIds}
        describeHref={(id: string) =>
          template.elements.some((e) => e.id === id)
            ? `/settings/describe/${encodeURIComponent(template.id)}/${encodeURIComponent(id)}?language=${language}`
            : null
        }
      />
      <div className="flex flex-wrap gap-2 pt-2">
        <button
          type="submit"
          className="rounded-md bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700"
        >
          {t("settings.save")}
        </button>
      </div>
    </Form>
  );
}

function FieldErrors({ id, errors }: { id: string; errors?: string[] }) {
  const { t } = useTranslation("templates");
  if (!errors?.length) return null;
  return (
    <p id={id} className="mt-1 text-xs text-red-700" role="alert">
      {errors.map((e) => t(e)).join(" ")}
    </p>
  );
}

function Counter({ length, max, warnAbove }: { length: number; max: number; warnAbove: number }) {
  return (
    <span
      className={`text-xs tabular-nums ${length > warnAbove ? "font-semibold text-red-700" : "text-slate-500"}`}
      data-counter
      data-max={max}
      data-warn-above={warnAbove}
    >
      {length}/{max}
    </span>
  );
}

export type StructureFormSchema = { elements: { id?: string; name: string; description: string }[]; prompt: string };

/** The element list (add, rename, describe, reorder, remove) and the prompt, all through the server. */
export function StructureFields({
  form,
  protectedIds,
  describeHref,
}: {
  form: FormMetadata<StructureFormSchema, string[]>;
  protectedIds: Set<string>;
  /** Link to the element-description dialog, for elements that are already saved. */
  describeHref?: (elementId: string) => string | null;
}) {
  const fields = form.getFieldset();
  const { t } = useTranslation("templates");
  const elements = fields.elements.getFieldList();
  return (
    <>
      <FieldErrors id={`${fields.elements.id}-errors`} errors={fields.elements.errors} />
      <ol className="space-y-3">
        {elements.map((element, index) => {
          const f = element.getFieldset();
          const isProtected = protectedIds.has(String(f.id.value ?? ""));
          const description = String(f.description.value ?? "");
          return (
            <li key={element.key} className="rounded-md border border-slate-200 p-3" data-element-row>
              <input {...getInputProps(f.id, { type: "hidden" })} key={f.id.key} />
              <div className="grid gap-3 md:grid-cols-[minmax(0,14rem)_minmax(0,1fr)_auto]">
                <label className="block text-xs font-medium text-slate-600">
                  {t("settings.elementName")}
                  {isProtected ? (
                    <span
                      className="ml-1 inline-block align-[-2px] text-slate-400"
                      title={t("errors.protectedTooltip")}
                      data-protected
                    >
                      <Icon name="lock" className="h-3.5 w-3.5" />
                      <span className="sr-only">{t("errors.protectedTooltip")}</span>
                    </span>
                  ) : null}
                  <input
                    {...getInputProps(f.name, { type: "text", ariaAttributes: true })}
                    key={f.name.key}
                    data-element-name
                    className="mt-1 block w-full rounded border border-slate-300 px-2 py-1 text-sm text-slate-900"
                  />
                  <FieldErrors id={f.name.errorId} errors={f.name.errors} />
                </label>
                <label className="block text-xs font-medium text-slate-600">
                  <span className="flex justify-between gap-2">
                    <span>
                      {t("settings.elementDescription")}
                      {describeHref?.(String(f.id.value ?? "")) ? (
                        <Link
                          to={describeHref(String(f.id.value ?? ""))!}
                          className="ml-2 font-normal text-brand-700 underline"
                          data-describe-link
                        >
                          {t("settings.editDescription")}
                        </Link>
                      ) : null}
                    </span>
                    <Counter length={description.length} max={MAX_DESCRIPTION} warnAbove={DESCRIPTION_WARN_ABOVE} />
                  </span>
                  <input
                    {...getInputProps(f.description, { type: "text", ariaAttributes: true })}
                    key={f.description.key}
                    data-element-description
                    maxLength={undefined}
                    className="mt-1 block w-full rounded border border-slate-300 px-2 py-1 text-sm text-slate-900"
                  />
                  <FieldErrors id={f.description.errorId} errors={f.description.errors} />
                </label>
                <div className="flex items-end gap-1">
                  <button
                    {...form.reorder.getButtonProps({ name: fields.elements.name, from: index, to: index - 1 })}
                    disabled={index === 0}
                    className={smallButton}
                    aria-label={t("settings.moveUp")}
                    title={t("settings.moveUp")}
                  >
                    ↑
                  </button>
                  <button
                    {...form.reorder.getButtonProps({ name: fields.elements.name, from: index, to: index + 1 })}
                    disabled={index === elements.length - 1}
                    className={smallButton}
                    aria-label={t("settings.moveDown")}
                    title={t("settings.moveDown")}
                  >
                    ↓
                  </button>
                  <button
                    {...form.remove.getButtonProps({ name: fields.elements.name, index })}
                    disabled={isProtected || elements.length <= 1}
                    className={smallButton}
                    title={isProtected ? t("errors.protectedTooltip") : t("settings.removeElement")}
                    aria-label={isProtected ? t("errors.protectedTooltip") : t("settings.removeElement")}
                  >
                    ✕
                  </button>
                </div>
              </div>
            </li>
          );
        })}
      </ol>
      {elements.length < MAX_ELEMENTS ? (
        <button
          {...form.insert.getButtonProps({ name: fields.elements.name, defaultValue: { name: "", description: "" } })}
          className={smallButton}
          data-action="add-element"
        >
          + {t("settings.addElement")}
        </button>
      ) : (
        <p className="text-xs text-slate-500">{t("errors.maxElements")}</p>
      )}
      <label className="block text-xs font-medium text-slate-600">
        <span className="flex justify-between">
          {t("settings.prompt")}
          <Counter length={String(fields.prompt.value ?? "").length} max={MAX_PROMPT} warnAbove={PROMPT_WARN_ABOVE} />
        </span>
        <textarea
          {...getTextareaProps(fields.prompt, { ariaAttributes: true })}
          key={fields.prompt.key}
          maxLength={undefined}
          rows={4}
          className="mt-1 block w-full rounded border border-slate-300 px-2 py-1 text-sm text-slate-900"
        />
        <FieldErrors id={fields.prompt.errorId} errors={fields.prompt.errors} />
      </label>
    </>
  );
}
