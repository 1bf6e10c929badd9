// Long lists are shown a page at a time (issue 9: a clinician with 1,000 recordings). A page is a plain link,
// `?page=N`, so it works without JavaScript, survives a reload and can be bookmarked; the newest come first.
// The database returns only the page's rows (models/recording-list.server.ts).

export const LIST_PAGE_SIZE = 50;

export type Pagination = {
  page: number;
  pages: number;
  total: number;
  /** 1-based positions of the first and last row shown (0 and 0 for an empty list). */
  first: number;
  last: number;
};

/** The page `url` asks for (`?page=N`); 1 when it names none or nonsense. */
export function askedPage(url: URL) {
  const asked = Number.parseInt(url.searchParams.get("page") ?? "1", 10);
  return Number.isFinite(asked) && asked > 1 ? asked : 1;
}

/**
 * The page `url` asks for, loaded by `load` (a model's page query: the rows at `offset` and the list's total).
 * A page past the end shows the last one — a second query, only for such addresses.
 */
export async function loadPage<T>(
  url: URL,
  load: (page: { offset: number; limit: number }) => Promise<{ rows: T[]; total: number }>,
  size = LIST_PAGE_SIZE,
) {
  let page = askedPage(url);
  let result = await load({ offset: (page - 1) * size, limit: size });
  const pages = Math.max(1, Math.ceil(result.total / size));
  if (page > pages) {
    page = pages;
    result = await load({ offset: (page - 1) * size, limit: size });
  }
  const offset = (page - 1) * size;
  const pagination: Pagination = {
    page,
    pages,
    total: result.total,
    first: result.rows.length ? offset + 1 : 0,
    last: offset + result.rows.length,
  };
  return { rows: result.rows, pagination };
}

/** `href` on page `page` (page 1 is the address without a page). */
export function withPage(href: string, page: number) {
  if (page <= 1) return href;
  const [path, hash] = href.split("#");
  return `${path}${path.includes("?") ? "&" : "?"}page=${page}${hash === undefined ? "" : `#${hash}`}`;
}
