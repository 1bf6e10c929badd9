// The export dialog's fields as its three doors read them (the dialog's text, the download route, the print view):
// what was typed, as text, for readExportDetails to check and for the dialog to show again on a refusal.

export type ExportFormValues = {
  recipientName: string;
  recipientAddress: string[];
  patientName: string;
  patientBirthDate: string;
  subject: string;
  date: string;
  keep: boolean;
};

export function exportFormValues(form: FormData): ExportFormValues {
  const field = (name: string) => {
    const value = form.get(name);
    return typeof value === "string" ? value : "";
  };
  return {
    recipientName: field("recipient_name"),
    recipientAddress: form.getAll("recipient_address").map((line) => (typeof line === "string" ? line : "")),
    patientName: field("patient_name"),
    patientBirthDate: field("patient_birth_date"),
    subject: field("subject"),
    date: field("date"),
    keep: form.get("keep") === "yes",
  };
}
