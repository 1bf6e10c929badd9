import { apiJson, apiPost } from "~/services/web/api.server";
import { auditPatientRecord } from "~/services/audit/events.server";
import { fetchPatientContext } from "~/services/letters/context-sources.server";

// SPEC §7 POST /api/extract-mfiles-pdf-context { patient_id } → { success, extracted_text, pdfs_processed }.
// Refused unless disable_mfiles is 0; rate-limited per user; audited without the patient id.
export const action = apiPost(async ({ request, user, body }) => {
  try {
    const result = await fetchPatientContext({ userId: user.id, patientId: body.patient_id });
    await auditPatientRecord(request, user.id, "patient-record.fetch");
    return apiJson(result);
  } catch (error) {
    await auditPatientRecord(request, user.id, "patient-record.fetch", "denied");
    throw error;
  }
});
