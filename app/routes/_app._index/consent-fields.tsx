import { useTranslation } from "react-i18next";
import { consentGivers, consentKinds } from "~/models/consent-rules";

const field = "mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm";

/**
 * The patient's consent to the recording (issue 22), asked with every upload and live recording: how it was given
 * and by whom. Without CONSENT_REQUIRED "not documented" may be chosen (and is the default); with it, a choice is
 * required before audio is accepted — by the browser here, and again by the server.
 */
export function ConsentFields({ required }: { required: boolean }) {
  const { t } = useTranslation("recordings");
  return (
    <fieldset className="grid gap-4 text-sm md:grid-cols-2" data-consent-fields>
      <legend className="mb-1 font-medium text-slate-700">{t("consent.legend")}</legend>
      <label className="block text-sm font-medium text-slate-700">
        {t("consent.kind")}
        <select name="consentKind" required={required} defaultValue="" className={field}>
          <option value="" disabled={required}>
            {required ? t("consent.choose") : t("consent.notDocumented")}
          </option>
          {consentKinds.map((kind) => (
            <option key={kind} value={kind}>
              {t(`consent.kinds.${kind}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="block text-sm font-medium text-slate-700">
        {t("consent.givenBy")}
        <select name="consentGivenBy" defaultValue="patient" className={field}>
          {consentGivers.map((giver) => (
            <option key={giver} value={giver}>
              {t(`consent.givers.${giver}`)}
            </option>
          ))}
        </select>
      </label>
      <p className="text-xs text-slate-500 md:col-span-2">{t("consent.help")}</p>
    </fieldset>
  );
}
