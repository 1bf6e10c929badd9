// One template to choose for a letter (the upload form's "create a letter with", the redo dialog): a radio button
// posting `templateId`, labelled with the template's name.

export function TemplateRadio({
  template,
  defaultChecked,
  required,
}: {
  template: { id: string; name: string };
  defaultChecked: boolean;
  required?: boolean;
}) {
  return (
    <label className="flex items-center gap-2">
      <input type="radio" name="templateId" value={template.id} required={required} defaultChecked={defaultChecked} />
      {template.name}
    </label>
  );
}
