import { useTranslation } from "react-i18next";

// SPEC §2 "System health tiles": one tile per service — healthy, not configured, or the reason it is not.

export type HealthTile = {
  name:
    | "database"
    | "storage"
    | "llm_primary"
    | "llm_secondary"
    | "media_conversion"
    | "antivirus"
    | "speech_recognition"
    | "speech_token"
    | "models";
  /** "downloading": the local engines' models are still arriving (issue 21). */
  status: "healthy" | "not_configured" | "error" | "downloading";
  detail: string | null;
  latencyMs: number | null;
};

const tones = {
  healthy: "border-emerald-300 bg-emerald-50 text-emerald-900",
  not_configured: "border-slate-300 bg-slate-50 text-slate-700",
  error: "border-red-300 bg-red-50 text-red-900",
  downloading: "border-sky-300 bg-sky-50 text-sky-900",
} as const;

const dots = {
  healthy: "bg-emerald-500",
  not_configured: "bg-slate-400",
  error: "bg-red-600",
  downloading: "bg-sky-500",
} as const;

export function HealthTiles({ tiles }: { tiles: HealthTile[] }) {
  const { t } = useTranslation("admin");
  return (
    <ul className="grid gap-3 sm:grid-cols-2 xl:grid-cols-4">
      {tiles.map((tile) => (
        <li
          key={tile.name}
          className={`rounded-lg border p-4 ${tones[tile.status]}`}
          data-health-tile={tile.name}
          data-status={tile.status}
        >
          <h3 className="text-sm font-semibold">{t(`health.services.${tile.name}`)}</h3>
          <p className="mt-2 flex items-center gap-2 text-sm font-medium">
            <span aria-hidden="true" className={`h-2.5 w-2.5 rounded-full ${dots[tile.status]}`} />
            {t(`health.status.${tile.status}`)}
            {tile.latencyMs !== null ? (
              <span className="ml-auto text-xs font-normal">{t("health.latency", { ms: tile.latencyMs })}</span>
            ) : null}
          </p>
          {tile.detail ? <p className="mt-1 text-xs break-words whitespace-pre-line">{tile.detail}</p> : null}
        </li>
      ))}
    </ul>
  );
}
