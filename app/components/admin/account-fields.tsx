// The fields the dashboard's account forms share (end sessions, delete an account): the account's exact e-mail
// address, and the explicit confirmation a destructive form asks for.

export function AccountEmailField({
  label,
  maxLength,
  defaultValue,
}: {
  label: string;
  maxLength: number;
  defaultValue: string;
}) {
  return (
    <label className="flex flex-col gap-1">
      {label}
      <input
        type="email"
        name="email"
        required
        maxLength={maxLength}
        autoComplete="off"
        defaultValue={defaultValue}
        className="rounded-md border border-slate-300 px-2 py-1.5"
      />
    </label>
  );
}

/** Checked means "yes"; the browser asks for it, and the action checks it again. */
export function ConfirmCheckbox({ label }: { label: string }) {
  return (
    <label className="flex items-start gap-2">
      <input type="checkbox" name="confirm" value="yes" className="mt-0.5" required />
      <span>{label}</span>
    </label>
  );
}
