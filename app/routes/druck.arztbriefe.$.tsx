import {
  json,
  type ActionFunctionArgs,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
} from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { LogoutButton } from "~/components/shell/top-bar";
import { auditLetter } from "~/services/audit/events.server";
import { exportDocument, exportedLetter, exportStart, readExportDetails } from "~/services/letters/export.server";
import type { ExportLetter } from "~/services/letter-export/export-letter";
import { formatLetterDate } from "~/services/letter-export/export-letter";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { hideAsNotFound } from "~/services/web/not-found.server";
import { requireUser } from "~/services/web/session.server";
import printStyles from "~/styles/letter-print.css";
import { exportFormValues } from "./_app.arztbriefe.$/export-form";
import { exportUrl } from "./_app.arztbriefe.$/paths";

// The print view of a finished letter (issue 25): the letter as the PDF lays it out after DIN 5008 form B, as an HTML
// page outside the workspace's frame, so the browser's print prints the letter alone — without JavaScript. GET shows
// it with the details kept with the letter; the export dialog's print button posts the details typed there. Audited
// as letter.export.print, never with content. Everything the letter or the doctor wrote is rendered as text.

export const handle: RouteHandle = { i18n: ["common", "letters"] };

export const links: LinksFunction = () => [{ rel: "stylesheet", href: printStyles }];

/** The letter's name: what a printed page's header and a browser's tab show. */
export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: data?.name ? `${data.name} · Skribent` : "Skribent" },
];

type PrintData = {
  document: Omit<ExportLetter, "labels" | "letterhead"> & PrintHead;
  backTo: string;
  logo: string | null;
};
type PrintHead = {
  letterhead: Omit<ExportLetter["letterhead"], "logo">;
  labels: { patient: string; born: string; date: string; phone: string; email: string; bsnr: string; lanr: string };
};

function hideLetter(error: unknown): never {
  return hideAsNotFound(error, { kinds: ["invalid"] });
}

/** What the page needs of the document: text only, the logo as a data URL (it is the doctor's own, checked file). */
function printable(document: ExportLetter, key: string): PrintData {
  const { labels, letterhead, ...rest } = document;
  const { logo, ...head } = letterhead;
  const { page: _page, ...text } = labels;
  return {
    document: { ...rest, letterhead: head, labels: text },
    backTo: exportUrl(key),
    logo: logo ? `data:${logo.mime};base64,${Buffer.from(logo.data).toString("base64")}` : null,
  };
}

/**
 * The loaders run again after a document POST, with the POST's headers (React Router's static handler): the print
 * button's answer is the action's, so the loader neither writes the letter a second time nor audits it twice.
 */
function afterPost(request: Request) {
  return /^(application\/x-www-form-urlencoded|multipart\/form-data)/.test(request.headers.get("Content-Type") ?? "");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const letter = await exportedLetter({ userId: user.id, key: params["*"] ?? "" }).catch(hideLetter);
  if (afterPost(request))
    return { document: null, backTo: exportUrl(letter.key), logo: null, error: null, name: letter.filename };
  const { details } = await exportStart({ userId: user.id, letter });
  const document = await exportDocument({ userId: user.id, letter, details, keep: false }).catch(hideLetter);
  await auditLetter(request, user.id, "letter.export.print", letter.key);
  return { ...printable(document, letter.key), error: null, name: letter.filename };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  // Whose letter it is, before anything the form says.
  const letter = await exportedLetter({ userId: user.id, key: params["*"] ?? "" }).catch(hideLetter);
  const values = exportFormValues(await request.formData());
  try {
    const details = readExportDetails(values);
    const document = await exportDocument({ userId: user.id, letter, details, keep: values.keep });
    await auditLetter(request, user.id, "letter.export.print", letter.key);
    return json({ ...printable(document, letter.key), error: null });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await auditLetter(request, user.id, "letter.export.print", letter.key, "failure");
    const t = await getFixedTFor(await getLanguage(request), ["common", "letters"]);
    const backTo = exportUrl(letter.key);
    return json({ document: null, backTo, logo: null, error: t(error.message, error.values) }, 400);
  }
}

export default function PrintView() {
  const loaded = useLoaderData<typeof loader>();
  const posted = useActionData<typeof action>();
  const { t } = useTranslation("letters");
  const data = posted ?? loaded;
  const lang = data.document?.language === "en-GB" ? "en" : "de";
  return (
    <div className="din-screen">
      <link rel="stylesheet" href={`/resources/letter-print.css?lang=${lang}`} />
      <nav className="din-toolbar" aria-label={t("export.print.toolbar")}>
        <a href={data.backTo} className="underline">
          {t("export.print.back")}
        </a>
        <span className="flex-1">{t("export.print.hint")}</span>
        {/* Sign-out on every signed-in page (ASVS 7.4.4); the toolbar is not printed. */}
        <LogoutButton />
      </nav>
      {data.error || !data.document ? (
        <p role="alert" className="din-toolbar text-red-800" data-error>
          {data.error}
        </p>
      ) : (
        <Letter document={data.document} logo={data.logo} />
      )}
    </div>
  );
}

function Letter({ document, logo }: { document: PrintData["document"]; logo: string | null }) {
  const head = document.letterhead;
  const labels = document.labels;
  const place = [head.postalCode, head.city].filter(Boolean).join(" ");
  const date = formatLetterDate(document.date, document.language);
  return (
    <article className="din-page" lang={document.language === "en-GB" ? "en-GB" : "de-DE"} data-print-letter>
      <span className="din-mark din-mark-fold-1" aria-hidden="true" />
      <span className="din-mark din-mark-punch" aria-hidden="true" />
      <span className="din-mark din-mark-fold-2" aria-hidden="true" />
      <header className="din-head" data-letterhead>
        <div>
          {head.practiceName ? <p className="din-practice">{head.practiceName}</p> : null}
          {head.doctors.map((line, i) => (
            <p key={i} className="din-small">
              {line}
            </p>
          ))}
        </div>
        {logo ? <img src={logo} alt="" /> : null}
      </header>
      <div className="din-address" data-address-field>
        <div className="din-remarks">{[head.practiceName, head.street, place].filter(Boolean).join(" · ")}</div>
        <div className="din-recipient" data-recipient>
          {[document.recipient.name, ...document.recipient.addressLines].filter(Boolean).join("\n")}
        </div>
      </div>
      <dl className="din-info" data-info-block>
        <dt>{labels.date}</dt>
        <dd>{date}</dd>
        {document.patient.name ? (
          <>
            <dt>{labels.patient}</dt>
            <dd>
              {document.patient.birthDate
                ? `${document.patient.name}, ${labels.born} ${formatLetterDate(document.patient.birthDate, document.language)}`
                : document.patient.name}
            </dd>
          </>
        ) : null}
        {head.phone ? (
          <>
            <dt>{labels.phone}</dt>
            <dd>{head.phone}</dd>
          </>
        ) : null}
        {head.email ? (
          <>
            <dt>{labels.email}</dt>
            <dd>{head.email}</dd>
          </>
        ) : null}
        {head.bsnr ? (
          <>
            <dt>{labels.bsnr}</dt>
            <dd>{head.bsnr}</dd>
          </>
        ) : null}
        {head.lanr ? (
          <>
            <dt>{labels.lanr}</dt>
            <dd>{head.lanr}</dd>
          </>
        ) : null}
      </dl>
      <div className="din-body">
        <p className="din-subject" data-subject>
          {document.subject}
        </p>
        {document.sections.map((section, i) => (
          <section key={i} className="din-section" data-print-section={section.title}>
            {section.title ? <h2>{section.title}</h2> : null}
            <p>{section.text}</p>
          </section>
        ))}
        <div className="din-closing" data-closing>
          <p>{head.closing}</p>
          <div className="din-signature">
            {head.signature.map((line, i) => (
              <p key={i}>{line}</p>
            ))}
          </div>
        </div>
      </div>
    </article>
  );
}
