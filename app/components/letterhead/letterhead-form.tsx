import {
  getFormProps,
  getInputProps,
  getTextareaProps,
  useForm,
  type FieldMetadata,
  type SubmissionResult,
} from "@conform-to/react";
import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import { LETTERHEAD_INTENT, LETTERHEAD_LIMITS } from "./schema";

// The letterhead form (issue 25), the same on the doctor's page and the practice's: plain posts, no JavaScript —
// the save form is multipart for the logo; removing the logo and removing the letterhead are forms of their own.
// Refused input comes back as typed, each field with its message (aria-invalid, described by it).

export type LetterheadFormValues = {
  practiceName: string;
  doctors: string;
  street: string;
  postalCode: string;
  city: string;
  phone: string;
  email: string;
  bsnr: string;
  lanr: string;
  closing: string;
  signature: string;
};

type Props = {
  id: string;
  values: LetterheadFormValues;
  lastResult: SubmissionResult<string[]> | undefined;
  /** The stored logo's preview address, or null. */
  logoSrc: string | null;
  /** Shown as placeholders: what a letter uses when the field is left empty. */
  placeholders: { closing: string; signature: string };
  saveLabel: string;
};

const input = "mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm font-normal";

export function LetterheadForm({ id, values, lastResult, logoSrc, placeholders, saveLabel }: Props) {
  const { t } = useTranslation("account");
  const [form, fields] = useForm<LetterheadFormValues & { intent: string; logo: string }>({
    id,
    lastResult,
    defaultValue: { ...values, intent: LETTERHEAD_INTENT.save },
    shouldValidate: "onSubmit",
  });
  const text = (name: keyof LetterheadFormValues, max: number, autoComplete = "off") => (
    <Field meta={fields[name]} label={t(`letterhead.fields.${name}`)} help={helpOf(name)}>
      <input
        {...getInputProps(fields[name], {
          type: "text",
          ariaAttributes: true,
          ariaDescribedBy: helpOf(name) ? helpIdOf(fields[name]) : undefined,
        })}
        key={fields[name].key}
        maxLength={max}
        autoComplete={autoComplete}
        className={input}
      />
    </Field>
  );
  const lines = (name: "doctors" | "signature", count: number, placeholder?: string) => (
    <Field meta={fields[name]} label={t(`letterhead.fields.${name}`)} help={helpOf(name)}>
      <textarea
        {...getTextareaProps(fields[name], { ariaAttributes: true, ariaDescribedBy: helpIdOf(fields[name]) })}
        key={fields[name].key}
        rows={count > 4 ? 3 : 2}
        placeholder={placeholder}
        className={input}
      />
    </Field>
  );
  function helpOf(name: keyof LetterheadFormValues) {
    const help: Partial<Record<keyof LetterheadFormValues, string>> = {
      doctors: t("letterhead.help.doctors", { lines: LETTERHEAD_LIMITS.doctors }),
      signature: t("letterhead.help.signature", { lines: LETTERHEAD_LIMITS.signature }),
      closing: t("letterhead.help.closing"),
      bsnr: t("letterhead.help.nineDigits"),
      lanr: t("letterhead.help.nineDigits"),
    };
    return help[name];
  }
  const logoHelpId = `${id}-logo-help`;
  const logoErrors = fields.logo.errors ?? [];
  return (
    <div className="space-y-4">
      <Form
        method="post"
        encType="multipart/form-data"
        {...getFormProps(form)}
        noValidate
        className="space-y-5"
        data-letterhead-form
      >
        <input type="hidden" name="intent" value={LETTERHEAD_INTENT.save} />
        {form.errors?.length ? (
          <p id={form.errorId} role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-red-800">
            {form.errors.join(" ")}
          </p>
        ) : null}
        <fieldset className="grid gap-4 sm:grid-cols-2">
          <legend className="mb-2 font-medium text-slate-900">{t("letterhead.groups.practice")}</legend>
          <div className="sm:col-span-2">{text("practiceName", LETTERHEAD_LIMITS.practiceName, "organization")}</div>
          <div className="sm:col-span-2">{lines("doctors", LETTERHEAD_LIMITS.doctors)}</div>
        </fieldset>
        <fieldset className="grid gap-4 sm:grid-cols-2">
          <legend className="mb-2 font-medium text-slate-900">{t("letterhead.groups.address")}</legend>
          <div className="sm:col-span-2">{text("street", LETTERHEAD_LIMITS.street, "street-address")}</div>
          {text("postalCode", LETTERHEAD_LIMITS.postalCode, "postal-code")}
          {text("city", LETTERHEAD_LIMITS.city, "address-level2")}
          {text("phone", LETTERHEAD_LIMITS.phone, "tel")}
          {text("email", LETTERHEAD_LIMITS.email, "email")}
          {text("bsnr", 11)}
          {text("lanr", 11)}
        </fieldset>
        <fieldset className="grid gap-4 sm:grid-cols-2">
          <legend className="mb-2 font-medium text-slate-900">{t("letterhead.groups.closing")}</legend>
          <Field meta={fields.closing} label={t("letterhead.fields.closing")} help={helpOf("closing")}>
            <input
              {...getInputProps(fields.closing, {
                type: "text",
                ariaAttributes: true,
                ariaDescribedBy: helpIdOf(fields.closing),
              })}
              key={fields.closing.key}
              maxLength={LETTERHEAD_LIMITS.closing}
              placeholder={placeholders.closing}
              autoComplete="off"
              className={input}
            />
          </Field>
          {lines("signature", LETTERHEAD_LIMITS.signature, placeholders.signature)}
        </fieldset>
        <fieldset className="space-y-2">
          <legend className="mb-2 font-medium text-slate-900">{t("letterhead.groups.logo")}</legend>
          {logoSrc ? (
            <div className="flex items-center gap-3" data-logo-preview>
              <img
                src={logoSrc}
                alt={t("letterhead.logo.alt")}
                className="max-h-20 max-w-48 rounded border border-slate-200 bg-white object-contain p-1"
              />
              <span className="text-xs text-slate-600">{t("letterhead.logo.current")}</span>
            </div>
          ) : (
            <p className="text-slate-600" data-logo-none>
              {t("letterhead.logo.none")}
            </p>
          )}
          <label className="block font-medium text-slate-700">
            {logoSrc ? t("letterhead.logo.replace") : t("letterhead.logo.choose")}
            <input
              type="file"
              name="logo"
              accept="image/png,image/svg+xml,.png,.svg"
              aria-invalid={logoErrors.length > 0 || undefined}
              aria-describedby={logoErrors.length ? `${fields.logo.errorId} ${logoHelpId}` : logoHelpId}
              className="mt-1 block w-full text-sm font-normal"
            />
          </label>
          <p id={logoHelpId} className="text-xs text-slate-600">
            {t("letterhead.logo.help", {
              kib: LETTERHEAD_LIMITS.logoBytes / 1024,
              pixels: LETTERHEAD_LIMITS.logoPixels,
            })}
          </p>
          {logoErrors.length ? (
            <p id={fields.logo.errorId} role="alert" className="text-red-700" data-letterhead-error="logo">
              {logoErrors.join(" ")}
            </p>
          ) : null}
        </fieldset>
        <div className="flex justify-end">
          <button type="submit" className={button} data-action="save-letterhead">
            {saveLabel}
          </button>
        </div>
      </Form>
    </div>
  );
}

function helpIdOf(meta: { id: string }) {
  return `${meta.id}-help`;
}

function Field({
  meta,
  label,
  help,
  children,
}: {
  meta: FieldMetadata<string>;
  label: string;
  help?: string;
  children: React.ReactNode;
}) {
  const errors = meta.errors ?? [];
  return (
    <div>
      {/* The control's aria-describedby (conform) names its error and this help. */}
      <label className="block font-medium text-slate-700">
        {label}
        {children}
      </label>
      {help ? (
        <p id={helpIdOf(meta)} className="mt-1 text-xs text-slate-600">
          {help}
        </p>
      ) : null}
      {errors.length ? (
        <p id={meta.errorId} role="alert" className="mt-1 text-red-700" data-letterhead-error={meta.name}>
          {errors.join(" ")}
        </p>
      ) : null}
    </div>
  );
}

/** "Remove logo" and "Remove letterhead": plain forms of their own beside the save form. */
export function LetterheadRemoveForms({
  hasLogo,
  hasLetterhead,
  labels,
}: {
  hasLogo: boolean;
  hasLetterhead: boolean;
  labels: { removeLogo: string; remove: string };
}) {
  if (!hasLogo && !hasLetterhead) return null;
  return (
    <div className="flex flex-wrap justify-end gap-2 border-t border-slate-200 pt-4">
      {hasLogo ? (
        <Form method="post">
          <input type="hidden" name="intent" value={LETTERHEAD_INTENT.removeLogo} />
          <button type="submit" className={quiet} data-action="remove-letterhead-logo">
            {labels.removeLogo}
          </button>
        </Form>
      ) : null}
      {hasLetterhead ? (
        <Form method="post">
          <input type="hidden" name="intent" value={LETTERHEAD_INTENT.remove} />
          <button
            type="submit"
            className="rounded-md border border-red-300 px-3 py-1.5 text-sm text-red-700 hover:bg-red-50"
            data-action="remove-letterhead"
          >
            {labels.remove}
          </button>
        </Form>
      ) : null}
    </div>
  );
}
