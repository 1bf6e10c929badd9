import { useTranslation } from "react-i18next";
import { Dismissible } from "./dismissible";

export type ToastView = { type: "error" | "success" | "info"; key: string; values?: Record<string, string> };

/** The one-time message carried across a redirect, translated on the server. */
export function ToastMessage({ toast }: { toast: ToastView | null }) {
  const { t } = useTranslation();
  if (!toast) return null;
  return (
    <div className="mb-4" data-toast={toast.key}>
      <Dismissible
        tone={toast.type}
        dismissLabel={t("toast.dismiss")}
        role={toast.type === "error" ? "alert" : "status"}
      >
        {t(toast.key, toast.values)}
      </Dismissible>
    </div>
  );
}
