import type { LoaderFunctionArgs } from "@remix-run/node";
import { getFixedTFor } from "~/services/web/i18n.server";

// The print view's page numbers (issue 25) in the letter's language: "Seite 1 von 2" as CSS, because the page's
// content security policy allows stylesheets from this origin only and page margin boxes are the one place a
// browser numbers printed pages. The wording is the export's (letters:export.labels.page).

/** A CSS string literal: quotes, backslashes and line breaks escaped. */
function cssString(text: string) {
  return `"${text.replace(/[\\"]/g, "\\$&").replace(/[\r\n]+/g, " ")}"`;
}

export async function loader({ request }: LoaderFunctionArgs) {
  const language = new URL(request.url).searchParams.get("lang") === "en" ? "en" : "de";
  const t = await getFixedTFor(language, "letters");
  const marker = "\u0000";
  const [before, between, after] = t("export.labels.page", { page: marker, pages: marker }).split(marker);
  const content = [cssString(before ?? ""), "counter(page)", cssString(between ?? ""), "counter(pages)"]
    .concat(after ? [cssString(after)] : [])
    .join(" ");
  const css = `@page {\n  @bottom-right {\n    content: ${content};\n    font: 8.5pt Arial, "Liberation Sans", sans-serif;\n  }\n}\n`;
  return new Response(css, {
    headers: { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600" },
  });
}
