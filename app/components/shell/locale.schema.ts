import { z } from "zod";
import { firstOf, optionalTextField } from "~/components/forms/fields";
import { supportedLanguages } from "~/i18n";

// The top bar's language switcher (issue 23), posted to /resources/locale: the button's language and the page to
// return to (checked by safeRedirect there). An unknown language changes nothing: the switcher just goes back.

export const localeSchema = z.object({
  language: firstOf(z.enum(supportedLanguages).optional()).catch(undefined),
  redirectTo: optionalTextField(),
});
