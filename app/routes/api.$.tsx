import { apiErrorResponse } from "~/services/web/api.server";

// Unknown API paths answer JSON, never an HTML page (SPEC §8 "HTTP").
export function loader() {
  return apiErrorResponse(404, "Not found");
}
export function action() {
  return apiErrorResponse(404, "Not found");
}
