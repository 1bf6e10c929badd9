// Long lists are shown a page at a time (issue 9: a clinician with 1,000 recordings). A page is a plain link,
// `?page=N`, so it works without JavaScript, survives a reload and can be bookmarked; the newest come first.

export const LIST_PAGE_SIZE = 50;

export type Pagination = {
  page: number;
  pages: number;
  total: number;
  /** 1-based positions of the first and last row shown (0 and 0 for an empty list). */
  first: number;
  last: number;
};

/** The page of `rows` that `url` asks for (`?page=N`); a page past the end shows the last one. */
export function paginate<T>(rows: readonly T[], url: URL, size = LIST_PAGE_SIZE) {
  const pages = Math.max(1, Math.ceil(rows.length / size));
  const asked = Number.parseInt(url.searchParams.get("page") ?? "1", 10);
  const page = Number.isFinite(asked) ? Math.min(Math.max(asked, 1), pages) : 1;
  const offset = (page - 1) * size;
  const shown = rows.slice(offset, offset + size);
  const pagination: Pagination = {
    page,
    pages,
    total: rows.length,
    first: shown.length ? offset + 1 : 0,
    last: offset + shown.length,
  };
  return { rows: shown, pagination };
}

/** `href` on page `page` (page 1 is the address without a page). */
export function withPage(href: string, page: number) {
  if (page <= 1) return href;
  const [path, hash] = href.split("#");
  return `${path}${path.includes("?") ? "&" : "?"}page=${page}${hash === undefined ? "" : `#${hash}`}`;
}
