import { useId } from "react";

/**
 * A message the user can close without JavaScript: a visually hidden checkbox
 * toggled by a label (SPEC §8 "dismissible red banner or toast").
 */
export function Dismissible({
  tone,
  dismissLabel,
  children,
  role = "status",
}: {
  tone: "error" | "success" | "info";
  dismissLabel: string;
  children: React.ReactNode;
  role?: "status" | "alert";
}) {
  const id = useId();
  const colours = {
    error: "border-red-300 bg-red-50 text-red-900",
    success: "border-emerald-300 bg-emerald-50 text-emerald-900",
    info: "border-sky-300 bg-sky-50 text-sky-900",
  }[tone];
  return (
    <div data-dismissible>
      <input type="checkbox" id={id} className="peer sr-only" aria-label={dismissLabel} />
      <div
        role={role}
        className={`flex items-start gap-3 rounded-md border px-4 py-3 text-sm shadow-sm peer-checked:hidden ${colours}`}
      >
        <div className="flex-1">{children}</div>
        <label
          htmlFor={id}
          className="-m-1 cursor-pointer rounded p-1 leading-none hover:bg-black/5"
          title={dismissLabel}
        >
          <span aria-hidden="true">×</span>
          <span className="sr-only">{dismissLabel}</span>
        </label>
      </div>
    </div>
  );
}
